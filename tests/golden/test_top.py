#!/usr/bin/env python3
"""gpuvet top in a real terminal: tmux, against the fake NVML (suite 'golden'; docs/top.md).

Usage: test_top.py GPUVET SRC_ROOT FAKE_LIB

gpuvet top runs in a detached tmux session of a fixed size, on its own tmux server; the
test reads the screen back with `tmux capture-pane -p` and types with send-keys:
1. 80x24, the busy scenario and a fixture root (/proc of three processes, one in a
   container, one exited, with stat, VmRSS and uptime; etc/passwd): the one-line GPU rows
   with their values, labelled ECC counts and throttle reasons, GPU 2 (a fault) red and
   GPU 0 (at its power cap) plain, the processes sorted by memory with user, NS-PID,
   %CPU ("-", then "0.0" at the second round), RSS, TIME and command.
2. Keys: p, u and m sort (title and order), Down moves the selection (reverse video),
   K is refused under --root, h shows the help whole at 80x24 and a key closes it.
   The tree (a root where torchrun, started by a shell, started 4242): t shows the host
   rows and the indented worker, Down and Up pass the host rows over, t again is flat, e
   sorts by elapsed time; --once --tree prints the tree.
3. tmux resize-window to 120x40: the three-line GPU form with bars, and the JOB/POD column
   (4242 in a Kubernetes pod named by kubelet's log layout, 5151 in a Slurm job, the
   exited PID "-"); back to 80x24.
4. q: exit 0, and the terminal is restored (stty: icanon and echo on again).
5. A GPU lost while the view runs (FAKE_NVML_SCENARIO_LATER=xid79-lost.scn): GPU 5 LOST,
   the others live.
6. A call that hangs (hang.scn): GPU 3 STALE naming the call, then every GPU stale once
   sampling stopped; q still quits at once, exit 0. Calls each slow but within their
   deadline (top-scenarios/slow.scn, later): every GPU stale by age, the age counting up.
7. gpuvet in a nested PID namespace (the root's proc/self/status NSpid has two PIDs):
   "other-ns" rows, never blank.
8. --once without a terminal: exit 0 on a healthy node, 1 with a lost GPU; bad options
   exit 2; no terminal without --once exits 2.
9. On the live root, a sleep of the test's own that the fake NVML lists on GPU 3: T asks
   naming PID and command, n cancels, y sends SIGTERM and the sleep dies of it; top run as
   nobody (setpriv, when root) gets EPERM for root's sleep, said on the bottom line.
Every wait polls the screen with a deadline scaled by fakeenv.time_scale(). SKIP (77)
without tmux.
"""
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import time

GPUVET, SRC_ROOT, FAKE_LIB = sys.argv[1:4]
FAKES = os.path.join(SRC_ROOT, "tests", "fakes")
SCN = os.path.join(FAKES, "scenarios")
TOP_SCN = os.path.join(SRC_ROOT, "tests", "golden", "top-scenarios")
sys.path.insert(0, FAKES)
import fakeenv  # noqa: E402

SCALE = fakeenv.time_scale()
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from testlib import check, finish  # noqa: E402


if not shutil.which("tmux"):
    print("SKIP: tmux is not installed (Debian package tmux; tools/bootstrap.sh)")
    sys.exit(77)

TMP = tempfile.mkdtemp(prefix="gpuvet-top-")
SOCKET = os.path.join(TMP, "tmux.sock")


def tmux(*args, check_rc=True):
    r = subprocess.run(["tmux", "-S", SOCKET, "-f", "/dev/null"] + list(args), capture_output=True, text=True,
                       timeout=30 * SCALE)
    if check_rc and r.returncode != 0:
        raise RuntimeError("tmux %s: %s" % (" ".join(args), r.stderr))
    return r.stdout


def write(path, text, mode="w"):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, mode) as f:
        f.write(text)


def make_root(nested, launcher=False):
    """A fixture root: the processes of busy.scn as /proc shows them, and etc/passwd; with
    launcher, 4242 started by torchrun (4000), itself by a shell (3900)."""
    root = tempfile.mkdtemp(prefix="root-", dir=TMP)
    write(os.path.join(root, "etc/passwd"),
          "root:x:0:0:root:/root:/bin/sh\nalice:x:1000:1000:Alice:/home/alice:/bin/sh\n")
    write(os.path.join(root, "proc/self/status"),
          "Name:\tgpuvet\nPid:\t100\nUid:\t0\t0\t0\t0\nNSpid:\t100%s\n" % ("\t7" if nested else ""))
    # 4242: alice's training, in a container where it is PID 17
    # booted 100000 s ago; stat's start (field 22) in ticks of 100 Hz, CPU time in 14 and 15
    write(os.path.join(root, "proc/uptime"), "100000.00 790000.00\n")
    write(os.path.join(root, "proc/4242/status"), "Name:\tpython3\nPid:\t4242\nUid:\t1000\t1000\t1000\t1000\n"
          "NSpid:\t4242\t17\nVmRSS:\t 1572864 kB\n")
    # started 1:02:03 ago; a command with a space and parentheses of its own
    write(os.path.join(root, "proc/4242/stat"), "4242 (py (thon) 3) S %d 4242 4242 0 -1 4194560 9000 0 0 0 "
          "36000 1200 0 0 20 0 12 0 %d 9000000000 393216 18446744073709551615\n"
          % (4000 if launcher else 1, (100000 - 3723) * 100))
    if launcher:
        for pid, ppid, name, argv in ((4000, 3900, "torchrun", b"torchrun\0--nproc-per-node\x008\0train.py\0"),
                                      (3900, 1, "bash", b"bash\0run.sh\0")):
            write(os.path.join(root, "proc/%d/status" % pid), "Name:\t%s\nPid:\t%d\nUid:\t1000\t1000\t1000\t1000\n"
                  "NSpid:\t%d\nVmRSS:\t   10240 kB\n" % (name, pid, pid))
            write(os.path.join(root, "proc/%d/stat" % pid), "%d (%s) S %d %d %d 0 -1 0 0 0 0 0 100 10 0 0 20 0 1 0 %d "
                  "0 0\n" % (pid, name, ppid, pid, pid, (100000 - 3800) * 100))
            write(os.path.join(root, "proc/%d/cmdline" % pid), argv, "wb")
    write(os.path.join(root, "proc/4242/cmdline"), b"python3\0train.py\0--epochs\x003\0", "wb")
    # its pod (kubelet's systemd driver) and the container's entry in kubelet's log layout
    cid = "3f9a" * 16
    write(os.path.join(root, "proc/4242/cgroup"), "0::/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod"
          "0f2b6e1c_4d3a_4b8e_9c1d_2a3b4c5d6e7f.slice/cri-containerd-%s.scope\n" % cid)
    write(os.path.join(root, "var/log/containers/trainer-7d9f8_ml-team_pytorch-%s.log" % cid), "")
    # 5151: root's, on the host
    write(os.path.join(root, "proc/5151/status"), "Name:\tpython3\nPid:\t5151\nUid:\t0\t0\t0\t0\nNSpid:\t5151\n"
          "VmRSS:\t  524288 kB\n")
    write(os.path.join(root, "proc/5151/stat"), "5151 (python3) R 1 5151 5151 0 -1 4194560 100 0 0 0 "
          "2000 100 0 0 20 0 4 0 %d 2000000000 131072 18446744073709551615\n" % ((100000 - 307) * 100))
    write(os.path.join(root, "proc/5151/cmdline"), b"python3\0eval.py\0", "wb")
    write(os.path.join(root, "proc/5151/cgroup"), "0::/system.slice/slurmstepd.scope/job_5151/step_0/user/task_0\n")
    # 777 has exited: no /proc entry
    return root


class Top:
    """gpuvet top in a tmux session of its own."""
    count = 0

    def __init__(self, args, scenario, cols=80, rows=24, extra=None, prefix=()):
        Top.count += 1
        self.name = "top%d" % Top.count
        self.rc_file = os.path.join(TMP, self.name + ".rc")
        self.stty_file = os.path.join(TMP, self.name + ".stty")
        env = fakeenv.gpuvet_env(scenario, dict({"GPUVET_NVML_LIB": FAKE_LIB}, **(extra or {})))
        script = os.path.join(TMP, self.name + ".sh")
        lines = ["export %s=%s" % (k, shlex.quote(v)) for k, v in env.items()
                 if k.isidentifier() and k not in ("TERM", "TMUX", "COLUMNS", "LINES")]
        lines.append("%s top %s 2>%s" % (" ".join(shlex.quote(a) for a in list(prefix) + [GPUVET]),
                                          " ".join(shlex.quote(a) for a in args),
                                          shlex.quote(os.path.join(TMP, self.name + ".err"))))
        lines.append("echo $? > %s.tmp && mv %s.tmp %s" % ((shlex.quote(self.rc_file),) * 3))
        lines.append("stty -a > %s.tmp && mv %s.tmp %s" % ((shlex.quote(self.stty_file),) * 3))
        write(script, "\n".join(lines) + "\n")
        tmux("new-session", "-d", "-s", self.name, "-x", str(cols), "-y", str(rows), "sh " + shlex.quote(script))

    def screen(self, escapes=False):
        r = tmux("capture-pane", "-p", *(["-e"] if escapes else []), "-t", self.name, check_rc=False)
        return r

    def wait(self, pred, what, seconds=10):
        deadline = time.monotonic() + seconds * SCALE
        last = ""
        while time.monotonic() < deadline:
            last = self.screen()
            if pred(last):
                return last
            time.sleep(0.05)
        check(False, what + "; the screen was:\n" + last)
        return last

    def keys(self, *keys):
        tmux("send-keys", "-t", self.name, *keys)

    def exit_code(self, seconds=10):
        deadline = time.monotonic() + seconds * SCALE
        while time.monotonic() < deadline:
            if os.path.exists(self.rc_file):
                return int(open(self.rc_file).read().strip())
            time.sleep(0.05)
        return None

    def stderr(self):
        try:
            return open(os.path.join(TMP, self.name + ".err")).read()
        except OSError:
            return ""

    def kill(self):
        tmux("kill-session", "-t", self.name, check_rc=False)


def line_with(screen, text):
    return next((line for line in screen.split("\n") if text in line), "")


SGR = re.compile(r"\x1b\[([0-9;]*)m")


def line_attrs(escaped, text):
    """The SGR codes in force where the first line holding text begins (capture-pane -e
    writes a code once, where it changes): {"1", "31"} is bold red; None when no line has it."""
    codes = set()

    def apply(seqs):
        for seq in seqs:
            for c in (seq or "0").split(";"):
                if c == "0":
                    codes.clear()
                elif c not in ("39", "49"):
                    codes.add(c)

    for line in escaped.split("\n"):
        lead = re.match(r"(?:\x1b\[[0-9;]*m)*", line).group(0)
        apply(SGR.findall(lead))
        if text in SGR.sub("", line):
            return set(codes)
        apply(SGR.findall(line[len(lead):]))
    return None


def proc_lines(screen):
    lines = screen.split("\n")
    for i, line in enumerate(lines):
        if line.startswith("GPU     PID"):
            return [x for x in lines[i + 1:] if x.strip() and not x.startswith("q quit")]
    return []


BUSY = os.path.join(TOP_SCN, "busy.scn")
HEALTHY = os.path.join(SCN, "h100-sxm-8gpu.scn")


def test_busy_small_keys_resize_quit():
    root = make_root(nested=False)
    t = Top(["--interval", "0.2", "--root", root], BUSY)
    try:
        s = t.wait(lambda s: "python3 train" in s, "80x24: the process rows appear")
        check("8 GPUs" in s and "sort: memory" in s, "80x24: the title names 8 GPUs and the sort")
        g0 = line_with(s, " 0 H100 80GB")
        check("87%" in g0 and "78C" in g0 and "612W" in g0 and "1980MHz" in g0 and "sw-power" in g0,
              "80x24: GPU 0's compact row shows 87%, 78C, 612W, 1980MHz, sw-power: " + g0)
        check("40.0/79.6G" in g0, "80x24: GPU 0's memory 40.0/79.6G: " + g0)
        g2 = line_with(s, " 2 H100 80GB")
        check("hw-thermal" in g2 and "ECC c0 u2" in g2, "80x24: GPU 2 shows hw-thermal and 2 uncorrected: " + g2)
        check("ECC c0 u0" in g0, "80x24: GPU 0's ECC labelled: " + g0)
        # GPU 2 (HW thermal slowdown, uncorrected ECC) is a fault, red; GPU 0 merely at its
        # power cap is drawn plain (review: both were bold yellow)
        esc = t.screen(escapes=True)
        a0, a2 = line_attrs(esc, " 0 H100 80GB"), line_attrs(esc, " 2 H100 80GB")
        check(a2 is not None and "31" in a2, "80x24: GPU 2 is red: %r" % a2)
        check(a0 is not None and not a0 & {"1", "31", "33"}, "80x24: GPU 0 at its power cap is plain: %r" % a0)
        check(len([x for x in s.split("\n") if " H100 80GB HBM3 [" in x]) == 8, "80x24: all 8 GPU rows fit")
        rows = proc_lines(s)
        check(len(rows) == 3, "80x24: three process rows: %r" % rows)
        if len(rows) == 3:
            # %CPU from two rounds: "-" on the first, then the fixture's unchanging CPU time
            check(rows[0].split()[:7] == ["0", "4242", "17", "alice", "30720MiB", "21%", "C"] and
                  rows[0].split()[8:10] == ["1.5G", "1:02:03"] and "python3 train" in rows[0],
                  "the container's process first, SM 21%, RSS, TIME: " + rows[0])
            check(rows[1].split()[:7] == ["0", "5151", "-", "root", "10240MiB", "64%", "C"] and
                  rows[1].split()[8:10] == ["512M", "05:07"] and "python3 eval" in rows[1],
                  "the host's process second, SM 64%: " + rows[1])
            check(rows[2].split()[:10] == ["1", "777", "-", "-", "2048MiB", "-", "C", "-", "-", "-"] and
                  "(exited)" in rows[2], "an exited PID said, its SM share above 100 % unknown: " + rows[2])
        s = t.wait(lambda s: [r.split()[7:8] for r in proc_lines(s)] == [["0.0"], ["0.0"], ["-"]],
                   "80x24: %CPU after a second round, 0.0 for CPU time that did not move")
        check("%CPU   RSS     TIME COMMAND" in line_with(s, "GPU     PID"), "80x24: the host columns' header: " +
              line_with(s, "GPU     PID"))
        s = t.screen()
        check(all(len(line) <= 80 for line in s.split("\n")), "80x24: no line wider than the pane")

        # the header (row 0) is redrawn before the rows below it: a capture can fall between,
        # so the wait is for the rows' order too
        t.keys("p")
        t.wait(lambda s: "sort: pid" in s and [r.split()[1] for r in proc_lines(s)] == ["777", "4242", "5151"],
               "p sorts by pid")
        t.keys("u")
        t.wait(lambda s: "sort: utilization" in s and [r.split()[1] for r in proc_lines(s)] == ["5151", "4242", "777"],
               "u sorts by the processes' SM shares (64%, 21%, unknown)")
        t.keys("m")
        t.wait(lambda s: "sort: memory" in s, "m sorts by memory")

        for key, pid in (("Down", "4242"), ("Down", "5151"), ("Up", "4242")):
            t.keys(key)
            t.wait(lambda s: line_with(s, " %s " % pid).startswith(">")
                   and sum(1 for line in proc_lines(s) if line.startswith(">")) == 1,
                   "%s marks the row of %s, and only it" % (key, pid))
        # under --root the processes are a fixture's: K is refused at once, no prompt
        t.keys("K")
        s = t.wait(lambda s: "SIGKILL not sent: under --root" in s, "--root: K refused, said on the bottom line")
        check("y/N" not in s, "--root: no confirmation asked")
        t.keys("Escape")
        t.wait(lambda s: "SIGKILL not sent" not in s and "q quit" in s, "a key clears the status line")
        t.keys("Up")
        t.wait(lambda s: line_with(s, " 4242 ").startswith(">"), "4242 selected again")
        t.keys("h")
        s = t.wait(lambda s: "this help" in s and "quit" in s, "h shows the help")
        # at 80x24 every help line whole, the last one too (review: "sort by memory, utilization, p")
        check("sort by GPU memory, SM share, PID" in s and "fell off the bus." in s and "blank: no reading." in s,
              "80x24: the help fits, whole lines: " + s)
        t.keys("x")
        t.wait(lambda s: "this help" not in s and "python3 train" in s, "a key closes the help")

        tmux("resize-window", "-t", t.name, "-x", "120", "-y", "40")
        # tmux can capture the pane while the redraw after the resize is half written: wait
        # for the whole frame, not its first GPU
        s = t.wait(lambda s: s.count("UTIL [") == 8 and s.count("PWR  [") == 8,
                   "120x40: the three-line form with bars, 8 GPUs in full")
        check("[|||||||||||" in line_with(s, "UTIL [||"), "120x40: GPU 0's utilization bar is filled")
        rows = [r.lstrip(">").split() for r in proc_lines(s)]  # the selected row starts with '>'
        check("JOB/POD" in line_with(s, "GPU     PID") and len(rows) == 3 and
              rows[0][10:12] == ["ml-team/trainer-7d9f8", "python3"] and rows[1][10:13] == ["job", "5151", "python3"]
              and rows[2][10:12] == ["-", "(exited)"] and "python3 train.py --epochs 3" in line_with(s, "4242"),
              "120x40: the JOB/POD column (pod, Slurm job, none): %r" % rows)
        check("enc 0% dec 0%  PCIe tx 3.0MB/s rx 6.2MB/s" in line_with(s, " 0 NVIDIA H100"),
              "120x40: GPU 0's encoder, decoder and PCIe traffic: " + line_with(s, " 0 NVIDIA H100"))
        check("fan" not in line_with(s, " 0 NVIDIA H100"), "120x40: no fan on an SXM module, none shown")
        check("UTIL %, last" not in s, "120x40: no chart (too narrow)")

        # a wide terminal: the history as a chart, GPU 0 (87 %) in its second row, the idle
        # GPUs on the bottom one
        tmux("resize-window", "-t", t.name, "-x", "200", "-y", "50")
        s = t.wait(lambda s: "UTIL %, last" in s and "python3 train" in s, "200x50: the history chart")
        lines = s.split("\n")
        title = next(i for i, x in enumerate(lines) if "UTIL %, last" in x)
        check("MEM used %, last" in lines[title], "200x50: the memory panel beside it: " + lines[title])
        check(lines[title + 1].startswith("100|") and "0" not in lines[title + 1][4:100],
              "200x50: nothing at 87.5-100 %%: %r" % lines[title + 1])
        check(re.search(r"^   \|\s*0+\s", lines[title + 2]) is not None,
              "200x50: GPU 0 at 87 %% in the row of 75-87.5 %%: %r" % lines[title + 2])
        check(re.search(r"^  0\|\s*\*+\s", lines[title + 8]) is not None,
              "200x50: the idle GPUs share the bottom row: %r" % lines[title + 8])
        check(lines[title + 9].startswith("GPU     PID"), "200x50: the process header under the chart")
        tmux("resize-window", "-t", t.name, "-x", "80", "-y", "24")
        t.wait(lambda s: "UTIL [" not in s and "python3 train" in s, "back to 80x24: one line per GPU")
        tmux("resize-window", "-t", t.name, "-x", "30", "-y", "6")
        t.wait(lambda s: "too small" in s, "30x6: says the terminal is too small")
        tmux("resize-window", "-t", t.name, "-x", "80", "-y", "24")
        t.wait(lambda s: "python3 train" in s, "80x24 again after too small")

        t.keys("q")
        rc = t.exit_code()
        check(rc == 0, "q exits 0 (got %r; stderr %r)" % (rc, t.stderr()))
        deadline = time.monotonic() + 10 * SCALE
        while not os.path.exists(t.stty_file) and time.monotonic() < deadline:
            time.sleep(0.05)
        stty = open(t.stty_file).read() if os.path.exists(t.stty_file) else ""
        words = stty.split()
        check("icanon" in words and "echo" in words, "the terminal is restored (icanon, echo): " + stty[:300])
    finally:
        t.kill()


def pids(screen):
    """The PID column of the process rows (the selected one starts with '>')."""
    return [r.lstrip(">").split()[1] for r in proc_lines(screen)]


def test_tree():
    """t shows 4242 under its launchers (host rows: GPU columns "-"), the selection only on
    GPU rows; t again is flat; e sorts by elapsed time; --once --tree prints the tree."""
    root = make_root(nested=False, launcher=True)
    t = Top(["--interval", "0.2", "--root", root], BUSY, cols=100, rows=40)
    try:
        s = t.wait(lambda s: "python3 train" in s, "tree: the process rows appear")
        check(" 4000 " not in s and " 3900 " not in s, "tree: the flat view has no host rows")
        t.keys("t")
        s = t.wait(lambda s: pids(s) == ["3900", "4000", "4242", "5151", "777"],
                   "tree: t puts 4242 under torchrun under bash, the others at the top level")
        check("COMMAND (tree)" in line_with(s, "GPU     PID"), "tree: the header says so")
        rows = (proc_lines(s) + [""] * 5)[:5]  # each check below fails, rather than the script, without them
        check(rows[0].split()[:7] == ["-", "3900", "-", "alice", "-", "-", "-"] and rows[0].endswith("bash run.sh"),
              "tree: the shell's host row, its GPU columns '-': " + rows[0])
        check(rows[1].split()[:7] == ["-", "4000", "-", "alice", "-", "-", "-"] and
              rows[1][66:].startswith("`- torchrun --nproc-per-node 8"),
              "tree: torchrun under it, the glyph where COMMAND starts: " + rows[1])
        check(rows[2].split()[:5] == ["0", "4242", "17", "alice", "30720MiB"] and
              rows[2][66:].startswith("   `- python3 train.py --epochs 3"),
              "tree: the worker under torchrun: " + rows[2])
        check(rows[3][66:].startswith("python3 eval.py") and rows[4][66:].startswith("(exited)"),
              "tree: 5151 and the exited 777 at the top level: %r" % rows[3:])
        t.keys("Down")  # the first GPU row, not the shell above it
        t.wait(lambda s: line_with(s, " 4242 ").startswith(">")
               and sum(1 for line in proc_lines(s) if line.startswith(">")) == 1, "tree: Down selects 4242")
        t.keys("Down")
        t.wait(lambda s: line_with(s, " 5151 ").startswith(">"), "tree: Down again: 5151")
        t.keys("Up", "Up", "Up")  # stays on the first GPU row: the host rows are passed over
        s = t.wait(lambda s: line_with(s, " 4242 ").startswith(">"), "tree: Up stops at 4242")
        check(not line_with(s, " 4000 ").startswith(">") and not line_with(s, " 3900 ").startswith(">"),
              "tree: a host row is never selected")
        t.keys("t")
        s = t.wait(lambda s: pids(s) == ["4242", "5151", "777"] and
                   "(tree)" not in s, "tree: t again, flat again")
        t.keys("p")
        t.wait(lambda s: "sort: pid" in s and pids(s) == ["777", "4242", "5151"],
               "tree: p sorts by pid")
        t.keys("e")
        t.wait(lambda s: "sort: time" in s and pids(s) == ["4242", "5151", "777"],
               "e sorts by elapsed time, the longest first, the exited one last")
        t.keys("q")
        check(t.exit_code() == 0, "tree: q exits 0 (%s)" % t.stderr())
    finally:
        t.kill()
    r = run_once(["--once", "--tree", "--width", "100", "--root", root], BUSY)
    rows = proc_lines(r.stdout)
    check(r.returncode == 0 and [x.split()[1] for x in rows] == ["3900", "4000", "4242", "5151", "777"] and
          "   `- python3 train.py --epochs 3" in rows[2], "--once --tree prints the tree: %s %r" % (r.stderr, rows))
    r = run_once(["--once", "--width", "100", "--root", root], BUSY)
    check(r.returncode == 0 and [x.split()[1] for x in proc_lines(r.stdout)] == ["4242", "5151", "777"],
          "--once without --tree is flat: %r" % proc_lines(r.stdout))


def test_lost_while_running():
    later = os.path.join(SCN, "xid79-lost.scn") + ":%d" % int(1500 * SCALE)
    t = Top(["--interval", "0.2"], HEALTHY, cols=120, rows=40, extra={"FAKE_NVML_SCENARIO_LATER": later})
    try:
        s = t.wait(lambda s: s.count("UTIL [") == 8, "lost: 8 GPUs shown first", seconds=10)
        check("LOST" not in s, "lost: no GPU lost before the change")
        s = t.wait(lambda s: "LOST" in s, "lost: GPU 5 shown lost after the change")
        g5 = line_with(s, " 5 NVIDIA H100")
        check("LOST" in g5 and "GPU is lost" in g5, "lost: GPU 5's line says LOST and why: " + g5)
        check(all("LOST" not in line_with(s, " %d NVIDIA H100" % i) for i in range(8) if i != 5),
              "lost: the other GPUs stay live")
        t.keys("q")
        check(t.exit_code() == 0, "lost: q exits 0 (%s)" % t.stderr())
    finally:
        t.kill()


def test_stale_on_hang():
    call_ms = int(400 * SCALE)
    t = Top(["--interval", "0.2", "--nvml-call-timeout-ms", str(call_ms)], os.path.join(SCN, "hang.scn"),
            cols=120, rows=40)
    try:
        s = t.wait(lambda s: "STALE" in s, "hang: a GPU shown stale", seconds=15)
        g3 = line_with(s, " 3 NVIDIA H100")
        check("STALE" in g3 and "nvmlDeviceGetPowerUsage" in g3, "hang: GPU 3 stale, the call named: " + g3)
        s = t.wait(lambda s: "sampling stopped" in s, "hang: the title says sampling stopped")
        check(all("STALE" in line_with(s, " %d NVIDIA H100" % i) for i in range(8)),
              "hang: every GPU stale once no round comes")
        check("UTIL [        --]" in s or "[" in line_with(s, "UTIL") and "--]" in line_with(s, "UTIL"),
              "hang: stale bars show no value: " + line_with(s, "UTIL"))
        t0 = time.monotonic()
        t.keys("q")
        rc = t.exit_code()
        check(rc == 0, "hang: q exits 0 (got %r; %s)" % (rc, t.stderr()))
        check(time.monotonic() - t0 < 5 * SCALE, "hang: q quits at once")
    finally:
        t.kill()


def test_stale_when_slow():
    """Calls each within their deadline but a round of seconds: stale by age, counting up."""
    later = os.path.join(TOP_SCN, "slow.scn") + ":%d" % int(1000 * SCALE)
    t = Top(["--interval", "0.2", "--nvml-call-timeout-ms", str(int(1000 * SCALE))], HEALTHY, cols=120, rows=40,
            extra={"FAKE_NVML_SCENARIO_LATER": later})
    try:
        s = t.wait(lambda s: s.count("UTIL [") == 8, "slow: 8 GPUs shown first")
        check("STALE" not in s, "slow: live before the change")
        s = t.wait(lambda s: "STALE: readings" in s, "slow: every GPU stale by age", seconds=15)
        check(all("STALE: readings" in line_with(s, " %d NVIDIA H100" % i) for i in range(8)),
              "slow: all 8 GPUs stale")
        first = line_with(s, " 0 NVIDIA H100")
        t.wait(lambda s: line_with(s, " 0 NVIDIA H100") != first and "STALE" in line_with(s, " 0 NVIDIA H100"),
               "slow: the age counts up")
        t0 = time.monotonic()
        t.keys("q")
        check(t.exit_code() == 0, "slow: q exits 0 (%s)" % t.stderr())
        check(time.monotonic() - t0 < 5 * SCALE, "slow: q quits within a round's call")
    finally:
        t.kill()


def test_nested_namespace():
    root = make_root(nested=True)
    t = Top(["--interval", "0.2", "--root", root], BUSY)
    try:
        s = t.wait(lambda s: "other-ns" in s, "nested: rows say other-ns")
        rows = proc_lines(s)
        check(len(rows) == 3 and all("other-ns" in r and "(other name" in r for r in rows),
              "nested: every process row says other namespace: %r" % rows)
        t.keys("q")
        check(t.exit_code() == 0, "nested: q exits 0")
    finally:
        t.kill()


def test_signal_live():
    """K/T/I on the live root: a child of the test's on GPU 3 (the fake lists its PID),
    asked with its PID and command, n cancels, y sends SIGTERM, which the child dies of."""
    child = subprocess.Popen(["sleep", "300"], stdin=subprocess.DEVNULL)
    scn = os.path.join(TMP, "signal.scn")
    write(scn, "include %s\n\n[gpu 3]\nprocess = %d 70000MiB sm=1 sleep 300\n" % (os.path.abspath(BUSY), child.pid))
    t = Top(["--interval", "0.2"], scn, cols=120, rows=40)
    try:
        mine = " %d " % child.pid
        t.wait(lambda s: mine in s and "sleep 300" in line_with(s, mine), "live: the child's row")
        t.keys("Down")  # its memory puts it first: the first Down selects it
        t.wait(lambda s: line_with(s, mine).startswith(">"), "live: the child's row selected")
        t.keys("T")
        s = t.wait(lambda s: "y/N" in s, "live: T asks")
        check("Send SIGTERM to PID %d (sleep 300)? y/N" % child.pid in s, "live: the prompt names PID and command: " +
              line_with(s, "y/N"))
        t.keys("n")
        t.wait(lambda s: "SIGTERM not sent to PID %d" % child.pid in s, "live: n cancels, said")
        check(child.poll() is None, "live: no signal after n")
        t.keys("T")
        t.wait(lambda s: "y/N" in s, "live: T asks again")
        t.keys("y")
        t.wait(lambda s: "SIGTERM sent to PID %d" % child.pid in s, "live: y sends, said")
        try:
            rc = child.wait(timeout=10 * SCALE)
        except subprocess.TimeoutExpired:
            rc = None
        check(rc == -signal.SIGTERM, "live: the child died of SIGTERM (%r)" % rc)
        t.keys("q")
        check(t.exit_code() == 0, "live: q exits 0 (%s)" % t.stderr())
    finally:
        t.kill()
        if child.poll() is None:
            child.kill()
            child.wait()


def test_signal_eperm():
    """Another user's process: top run as nobody (setpriv), a sleep of root's on GPU 3: y
    says EPERM on the bottom line, and the sleep lives on. Root alone can run top as
    another user: SKIPPED (said) otherwise."""
    if os.geteuid() != 0 or not shutil.which("setpriv"):
        print("test_signal_eperm: skipped (needs root and setpriv to run top as nobody)")
        return
    child = subprocess.Popen(["sleep", "300"], stdin=subprocess.DEVNULL)
    os.chmod(TMP, 0o755)  # nobody reads the scenario and the script
    scn = os.path.join(TMP, "eperm.scn")
    write(scn, "include %s\n\n[gpu 3]\nprocess = %d 70000MiB sm=1 sleep 300\n" % (os.path.abspath(BUSY), child.pid))
    t = Top(["--interval", "0.2"], scn, cols=120, rows=40,
            prefix=["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"])
    try:
        mine = " %d " % child.pid
        t.wait(lambda s: "sleep 300" in line_with(s, mine), "eperm: the root-owned child's row")
        t.keys("Down")  # its memory puts it first: the first Down selects it
        t.wait(lambda s: line_with(s, mine).startswith(">"), "eperm: the child's row selected")
        t.keys("K")
        t.wait(lambda s: "Send SIGKILL to PID %d" % child.pid in s, "eperm: K asks")
        t.keys("y")
        s = t.wait(lambda s: "not permitted (EPERM)" in s, "eperm: said on the bottom line")
        check(("SIGKILL to PID %d: not permitted (EPERM): run as its owner or as root" % child.pid) in s,
              "eperm: the status line names signal, PID and what to do: " + line_with(s, "EPERM"))
        check(child.poll() is None, "eperm: the other user's process lives on")
        t.keys("q")
        check(t.exit_code() == 0, "eperm: q exits 0 (%s)" % t.stderr())
    finally:
        t.kill()
        os.chmod(TMP, 0o700)
        if child.poll() is None:
            child.kill()
            child.wait()


def run_once(args, scenario, extra=None):
    env = fakeenv.gpuvet_env(scenario, dict({"GPUVET_NVML_LIB": FAKE_LIB}, **(extra or {})))
    return subprocess.run([GPUVET, "top"] + args, env=env, capture_output=True, text=True, stdin=subprocess.DEVNULL,
                          timeout=60 * SCALE)


def test_once_and_usage():
    r = run_once(["--once", "--width", "80"], HEALTHY)
    check(r.returncode == 0, "--once healthy exits 0: %s" % r.stderr)
    check(r.stdout.count("NVIDIA H100 80GB HBM3  ECC corr 0 uncorr 0  throttle: idle") == 8, "--once: 8 GPU headers")
    check(all(len(x) <= 80 for x in r.stdout.split("\n")), "--once --width 80: no line wider")
    r = run_once(["--once"], os.path.join(SCN, "xid79-lost.scn"))
    check(r.returncode == 1 and "GPU 5 is lost" in r.stderr, "--once with a lost GPU exits 1 naming it: %s" % r.stderr)
    r = run_once(["--once"], os.path.join(SCN, "driver-not-loaded.scn"))
    check(r.returncode == 1 and "nvmlInit" in r.stderr, "--once without a driver exits 1 saying so: %s" % r.stderr)
    for args, what in ((["--interval", "0"], "--interval"), (["--interval", "x"], "--interval"),
                       (["--sort", "name"], "--sort"), (["--width", "10"], "--width"), (["--no-nvml"], "--no-nvml")):
        r = run_once(args + ["--once"], HEALTHY)
        check(r.returncode == 2 and what in r.stderr, "%s exits 2 naming %s: %s" % (args, what, r.stderr))
    r = run_once([], HEALTHY)
    check(r.returncode == 2 and "terminal" in r.stderr, "no terminal without --once exits 2: %s" % r.stderr)


try:
    tmux("start-server", check_rc=False)
    for test in (test_once_and_usage, test_busy_small_keys_resize_quit, test_tree, test_lost_while_running,
                 test_stale_on_hang,
                 test_stale_when_slow, test_nested_namespace, test_signal_live,
                 test_signal_eperm):
        t0 = time.monotonic()
        test()
        print("%s: %.1f s" % (test.__name__, time.monotonic() - t0))
finally:
    tmux("kill-server", check_rc=False)
    shutil.rmtree(TMP, ignore_errors=True)

sys.exit(finish())
