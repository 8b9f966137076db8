#!/usr/bin/env python3
"""Bad input never crashes gpuvet check.

Damaged copies of a fixture (the shared generator's when tests/fixtures/mkfixture.py
works, else tests/golden/fixture_tree.py) are checked with `gpuvet check --root`. For
each: exit 0 or 1 (never a signal, never 3), no sanitizer report, a complete JSON report
(every check of the healthy run still reports), and every result that cites the damaged
file as its evidence in the healthy run now says skip or error and names the file.
Then the inputs that must be refused: a --root that does not exist or is a regular file,
and a malformed --data-dir gpus.json (exit 2, the message names the input).

Usage: test_badinput.py GPUVET SRCDIR"""

import contextlib
import fnmatch
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fixture_tree  # noqa: E402

GPUVET = None
SRCDIR = None
SANITIZER_MARKS = ("AddressSanitizer", "LeakSanitizer", "UndefinedBehaviorSanitizer", "runtime error:")
HUGE_BYTES = 100 << 20
ASIDE = ".badinput-aside"  # in the tree checked, where moved_aside keeps what it moved

# Results known to report a damaged file without naming it: (check id, file name) -> why.
# A gap that gets fixed is announced so its entry can be removed; any other miss fails.
# Problems the test found and that are not fixed yet: (check id, damaged file) -> why.
# Each is printed instead of failing; an entry that starts passing is reported as FIXED.
KNOWN_GAPS = {}


def run_check(root, prefix=(), extra=()):
    """Run check on root; returns (exit code, report dict or None, stdout, stderr). With a
    prefix that switches user, the report goes to a directory that user owns (the report
    is written with a rename, which a sticky /tmp refuses across owners)."""
    outdir = tempfile.mkdtemp(prefix="gpuvet-badinput-out.")
    if prefix:
        os.chown(outdir, 65534, 65534)
    out = os.path.join(outdir, "report.json")
    try:
        r = subprocess.run(list(prefix) + [GPUVET, "check", "--root", root, "--json", out, "--color", "never",
                                           *extra],
                           capture_output=True, text=True, timeout=60)
        report = None
        if os.path.exists(out):
            with open(out) as f:
                report = json.load(f)
        return r.returncode, report, r.stdout, r.stderr
    finally:
        shutil.rmtree(outdir, ignore_errors=True)


def expand_braces(s):
    m = re.search(r"\{([^{}]*)\}", s)
    if not m:
        return [s]
    return [x for alt in m.group(1).split(",") for x in expand_braces(s[:m.start()] + alt + s[m.end():])]


def texts(result):
    """The strings of a result that can name a file."""
    out = [result.get("summary") or "", result.get("observed") or ""]
    for v in (result.get("evidence") or {}).values():
        out.append(v if isinstance(v, str) else json.dumps(v))
    return out


def cites(result, path):
    """Does the result's summary or evidence name the file at path ("/sys/...")?"""
    for s in texts(result):
        if path in s:
            return True
        for word in s.split():
            if "*" in word or "{" in word:
                if any(fnmatch.fnmatchcase(path, w) for w in expand_braces(word)):
                    return True
    return False


def key(result):
    return result["id"], result.get("subject")


def nvidia_devices(root):
    """Root-relative real directories of the NVIDIA display devices in a tree."""
    out = []
    base = os.path.join(root, "sys/bus/pci/devices")
    for name in sorted(os.listdir(base)) if os.path.isdir(base) else []:
        d = os.path.realpath(os.path.join(base, name))
        try:
            with open(os.path.join(d, "vendor")) as f:
                vendor = f.read().strip()
            with open(os.path.join(d, "class")) as f:
                cls = f.read().strip()
        except OSError:
            continue
        if vendor == "0x10de" and cls.startswith("0x03"):
            out.append(os.path.relpath(d, os.path.realpath(root)))
    return out


class DamageBase(unittest.TestCase):
    """A writable fixture, its healthy report, and damage() (no tests of its own)."""
    FIXTURE = None  # a generator machine by name; None: the first one (or the small tree)
    n = 0           # backups made, across classes (their names must not collide)

    @classmethod
    def make_base(cls, dest):
        if cls.FIXTURE is None:
            return fixture_tree.make_fixture(SRCDIR, dest)
        cache = fixture_tree._fixture_cache(SRCDIR)
        if cache is None:
            raise unittest.SkipTest(f"no fixture generator for {cls.FIXTURE}")
        try:
            # An overlay (as root) whose directories can be moved aside within it: a copy of
            # the fixture took a minute on a loaded machine.
            cache.private_mounts()
            return cache.writable(cls.FIXTURE, dest, renames=True), f"mkfixture.py {cls.FIXTURE}"
        except (subprocess.CalledProcessError, OSError) as e:
            raise unittest.SkipTest(f"fixture {cls.FIXTURE} cannot be made here: {e}")

    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="gpuvet-badinput.")
        os.chmod(cls.tmp, 0o755)
        cls.base, what = cls.make_base(os.path.join(cls.tmp, "base"))
        os.mkdir(os.path.join(cls.base, ASIDE))  # before the healthy run: only the damage differs
        print(f"fixture: {what}", file=sys.stderr)
        code, report, _, err = run_check(cls.base)
        assert code in (0, 1) and report, f"the healthy fixture does not check cleanly: {code}\n{err}"
        cls.healthy = report
        cls.gpus = nvidia_devices(cls.base)
        assert cls.gpus, "the fixture has no NVIDIA GPU"

    @classmethod
    def tearDownClass(cls):
        fixture_tree.release(SRCDIR, cls.base)
        shutil.rmtree(cls.tmp, ignore_errors=True)

    @contextlib.contextmanager
    def moved_aside(self, rel):
        """Move root-relative rel aside for the duration, then put it back (copying the
        generator's tree, ~20k files, for every case would take minutes). The backup stays
        in the tree, in a directory no check reads: an overlay renames only within itself."""
        DamageBase.n += 1
        path = os.path.join(self.base, rel)
        backup = os.path.join(self.base, ASIDE, f"backup{DamageBase.n}")
        os.rename(path, backup)
        try:
            yield path, backup
        finally:
            if os.path.isdir(path) and not os.path.islink(path):
                shutil.rmtree(path)
            elif os.path.lexists(path):
                os.unlink(path)
            os.rename(backup, path)

    def assert_survives(self, root, prefix=(), what=""):
        code, report, out, err = run_check(root, prefix)
        for mark in SANITIZER_MARKS:
            self.assertNotIn(mark, err, f"{what}: sanitizer report\n{err}")
        self.assertIn(code, (0, 1), f"{what}: exit {code}\n{err}")
        self.assertIsNotNone(report, f"{what}: no JSON report\n{err}")
        self.assertIn("Verdict", out, f"{what}: no text verdict")
        self.assertEqual(report.get("schema"), "gpuvet.report/1")
        summary = report.get("summary") or {}
        self.assertIn("verdict", summary, what)
        for r in report["checks"]:
            self.assertIn(r["status"], ("pass", "warn", "fail", "skip", "error"), what)
            self.assertTrue(r.get("summary"), f"{what}: {r['id']} has no summary")
        self.assertEqual({r["id"] for r in report["checks"]}, {r["id"] for r in self.healthy["checks"]},
                         f"{what}: checks went missing from the report")
        return code, report

    def damage(self, rel, content=None, make=None, allowed=("skip", "error"), prefix=(), what=None,
               any_citing=False):
        """Damage the file at root-relative rel, check, and assert that every result citing
        it in the healthy run (with any_citing: at least one) now reports an allowed status
        and names the file."""
        if what is None:
            what = f"{rel}: {content[:20]!r}" if content is not None else rel
        with self.moved_aside(rel) as (path, backup):
            if make:
                make(path, backup)
            else:
                with open(path, "wb") as f:
                    f.write(content)
            code, report = self.assert_survives(self.base, prefix, what)
        abs_path = "/" + rel
        citing = {key(r) for r in self.healthy["checks"] if cites(r, abs_path)}
        now = {key(r): r for r in report["checks"]}
        base = os.path.basename(rel)
        verdicts = []
        for k in sorted(citing, key=str):
            self.assertIn(k, now, f"{what}: result {k} went missing")
            r = now[k]
            problem = None
            if r["status"] not in allowed:
                problem = f"says {r['status']}: {r['summary']}"
            elif not (cites(r, abs_path) or any(base in s for s in texts(r))):
                problem = f"does not name {base}: {r}"
            verdicts.append((k, problem))
        misses = [(k, p) for k, p in verdicts if p]
        if any_citing and verdicts and len(misses) < len(verdicts):
            misses = []  # one check judging the damaged value is enough (others may use it in passing)
        for k, problem in misses:
            gap = KNOWN_GAPS.get((k[0], base))
            if gap:
                print(f"KNOWN GAP ({what}): {k} {problem[:160]}: {gap}", file=sys.stderr)
            else:
                self.fail(f"{what}: {k} {problem}")
        for k, problem in verdicts:
            if not problem and (k[0], base) in KNOWN_GAPS:
                print(f"FIXED ({what}): {k} now reports {base}; remove it from KNOWN_GAPS", file=sys.stderr)
        if not citing:
            print(f"note: no check cites /{rel} as evidence; checked completeness only", file=sys.stderr)
        return report



class BadInput(DamageBase):
    def gpu_file(self, name):
        return f"{self.gpus[-1]}/{name}"

    # --- damaged values ---------------------------------------------------------------

    def ids_damage(self, field, value):
        """What to damage for a wrong PCI id: the uevent line when the tree has uevent files
        (gpuvet reads the ids there), else the attribute file. Returns (file name, bytes)."""
        uevent = os.path.join(self.base, self.gpu_file("uevent"))
        if not os.path.exists(uevent):
            return field, value + b"\n"
        key = {"vendor": "PCI_ID", "class": "PCI_CLASS"}[field]
        with open(uevent, "rb") as f:
            lines = f.read().decode().splitlines()
        if field == "vendor" and value.startswith(b"0x"):
            device = next(x for x in lines if x.startswith("PCI_ID=")).split(":")[1]
            value = value[2:] + b":" + device.encode()
        out = [x if not x.startswith(key + "=") else key + "=" + value.decode() for x in lines]
        return "uevent", ("\n".join(out) + "\n").encode()

    def test_truncated_vendor(self):
        name, content = self.ids_damage("vendor", b"0x10")
        report = self.damage(self.gpu_file(name), content)
        self.assertEqual(len(report["gpus"]), len(self.healthy["gpus"]) - 1,
                         "a device whose vendor reads 0x10 is not an NVIDIA GPU")

    def test_ids_from_attributes_without_uevent(self):
        """A capture without uevent files: the ids come from vendor/device/class."""
        uevent = self.gpu_file("uevent")
        if not os.path.exists(os.path.join(self.base, uevent)):
            self.skipTest("this tree has no uevent files")
        with self.moved_aside(uevent) as (path, backup):
            code, report = self.assert_survives(self.base, (), "no uevent")
            self.assertEqual(len(report["gpus"]), len(self.healthy["gpus"]))
            with self.moved_aside(self.gpu_file("vendor")) as (vpath, vbackup):
                with open(vpath, "wb") as f:
                    f.write(b"garbage\n")
                code, report = self.assert_survives(self.base, (), "no uevent, garbage in vendor")
        addr = os.path.basename(self.gpus[-1])
        inv = [r for r in report["checks"] if r["id"] == "gpu.inventory" and r["subject"] == addr]
        self.assertTrue(inv and inv[0]["status"] == "error" and "vendor" in inv[0]["summary"], inv)

    def test_empty_files(self):
        for name in ("uevent", "vendor", "current_link_width", "current_link_speed", "numa_node", "resource", "config",
                     "aer_dev_correctable"):
            with self.subTest(name=name):
                self.damage(self.gpu_file(name), b"", what=f"empty {name}")

    def test_garbage(self):
        for name in ("current_link_width", "max_link_width", "current_link_speed", "numa_node", "local_cpulist",
                     "aer_dev_fatal", "resource"):
            with self.subTest(name=name):
                self.damage(self.gpu_file(name), b"garbage\n", what=f"garbage in {name}")
        addr = os.path.basename(self.gpus[-1])
        for field in ("vendor", "class"):
            name, content = self.ids_damage(field, b"garbage")
            with self.subTest(name=field):
                report = self.damage(self.gpu_file(name), content, what=f"garbage in {field}",
                                     any_citing=True)
                # Known as a GPU from the driver's list alone: its model is unknown because
                # the id is damaged, not because the table is old (review B17).
                inv = [r for r in report["checks"] if r["id"] == "gpu.inventory" and r["subject"] == addr]
                self.assertTrue(inv, f"garbage in {name}: no gpu.inventory result for {addr}")
                if inv:
                    self.assertEqual(inv[0]["status"], "error", inv[0])
                    self.assertIn(name, inv[0]["summary"], inv[0])
                    self.assertNotIn("Update gpuvet", inv[0].get("remedy") or "", inv[0])

    def test_garbage_governor(self):
        cpufreq = "sys/devices/system/cpu/cpu0/cpufreq/scaling_governor"
        if not os.path.exists(os.path.join(self.base, cpufreq)):
            self.skipTest("the fixture has no cpufreq")
        # A governor is a name: an unknown one may be judged (warn/fail) as well as refused.
        self.damage(cpufreq, b"garbage\n", allowed=("skip", "error", "warn", "fail"), any_citing=True)

    def test_binary_text(self):
        self.damage(self.gpu_file("current_link_width"), b"1\x006\n", what="NUL inside a value")
        self.damage(self.gpu_file("current_link_speed"), bytes(range(256)), what="binary in a text attribute")

    def test_out_of_range(self):
        self.damage(self.gpu_file("current_link_width"), b"4294967296\n", what="width past 32 bits")
        self.damage(self.gpu_file("numa_node"), b"99999999999999999999\n", what="numa_node overflow")
        self.damage(self.gpu_file("local_cpulist"), b"0-4294967295\n", what="cpulist range past any CPU")

    def test_huge_file(self):
        def huge(path, backup):
            with open(path, "wb") as f:
                f.write(b"16\n")
                f.truncate(HUGE_BYTES)  # sparse: 100 MB to a reader, no disk used
        for name in ("current_link_width", "resource"):
            with self.subTest(name=name):
                self.damage(self.gpu_file(name), make=huge, what=f"100 MB {name}")
        self.damage("proc/cpuinfo", make=huge, allowed=("skip", "error", "warn", "fail", "pass"),
                    what="100 MB /proc/cpuinfo")

    def test_fifo_and_directory(self):
        def fifo(path, backup):
            os.mkfifo(path)

        def directory(path, backup):
            os.mkdir(path)
        for name in ("current_link_width", "uevent", "vendor", "config"):
            with self.subTest(kind="fifo", name=name):
                self.damage(self.gpu_file(name), make=fifo, what=f"FIFO as {name}")
            with self.subTest(kind="dir", name=name):
                self.damage(self.gpu_file(name), make=directory, what=f"directory as {name}")
        self.damage("proc/meminfo", make=fifo, allowed=("skip", "error", "warn", "fail", "pass"),
                    what="FIFO as /proc/meminfo")

    def test_symlink_loop_and_dangling(self):
        def loop(path, backup):
            os.symlink(os.path.basename(path), path)

        def dangling(path, backup):
            os.symlink("../no/such/file", path)
        self.damage(self.gpu_file("current_link_width"), make=loop, what="symlink loop")
        self.damage(self.gpu_file("current_link_speed"), make=dangling, what="dangling symlink")

    def test_unreadable_as_user(self):
        if os.geteuid() != 0:
            self.skipTest("needs root to switch to an unprivileged user")
        runas = (["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"] if shutil.which("setpriv")
                 else ["runuser", "-u", "nobody", "--"] if shutil.which("runuser") else None)
        if not runas:
            self.skipTest("neither setpriv nor runuser is available")

        def unreadable(path, backup):
            shutil.copyfile(backup, path)
            os.chmod(path, 0)
        for name in ("current_link_width", "config", "numa_node"):
            with self.subTest(name=name):
                self.damage(self.gpu_file(name), make=unreadable, prefix=runas, what=f"chmod 000 {name}")

    def runas(self):
        if os.geteuid() != 0:
            self.skipTest("needs root to switch to an unprivileged user")
        if shutil.which("setpriv"):
            return ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]
        if shutil.which("runuser"):
            return ["runuser", "-u", "nobody", "--"]
        self.skipTest("neither setpriv nor runuser is available")

    def statuses(self, report, ids):
        return {key(r): r["status"] for r in report["checks"] if r["id"] in ids}

    def test_unknown_modules_are_not_absent(self):
        """An unreadable or garbled /proc/modules leaves the modules unknown: the driver,
        loaded by every other sign, must not be judged missing (review B4)."""
        runas = self.runas()
        ids = ("gpu.driver_version", "gpu.fabric_manager", "gpu.persistence")
        healthy = self.statuses(self.healthy, ids)

        def unreadable(path, backup):
            shutil.copyfile(backup, path)
            os.chmod(path, 0)
        # Empty is a valid list (no module loaded), so nouveau may pass on it.
        for what, content, make, prefix, allowed in (
                ("chmod 000 /proc/modules", None, unreadable, runas, ("skip", "error")),
                ("binary /proc/modules", bytes(range(1, 256)) * 16, None, (), ("skip", "error")),
                ("empty /proc/modules", b"", None, (), ("skip", "error", "pass"))):
            with self.subTest(what=what):
                report = self.damage("proc/modules", content, make=make, prefix=prefix, what=what, allowed=allowed)
                now = self.statuses(report, ids)
                for k, st in now.items():
                    self.assertIn(st, (healthy.get(k), "error"), f"{what}: {k} {st} (healthy: {healthy.get(k)})")
                nouveau = [r for r in report["checks"] if r["id"] == "gpu.nouveau"]
                if content != b"":
                    self.assertTrue(nouveau and nouveau[0]["status"] == "error" and "/proc/modules" in
                                    nouveau[0]["summary"], f"{what}: gpu.nouveau {nouveau}")

    def test_unlisted_pci_bus_is_not_empty(self):
        """/sys/bus/pci/devices that cannot be listed leaves the GPUs unknown, not absent:
        gpu.inventory errors, the verdict is not PASS (review B5)."""
        runas = self.runas()

        def unreadable_dir(path, backup):
            shutil.copytree(backup, path, symlinks=True)
            os.chmod(path, 0)
        with self.moved_aside("sys/bus/pci/devices") as (path, backup):
            unreadable_dir(path, backup)
            try:
                code, report = self.assert_survives(self.base, runas, "chmod 000 /sys/bus/pci/devices")
            finally:
                os.chmod(path, 0o755)
        self.assertEqual(code, 1, "the verdict of a node whose GPUs are unknown")
        inv = [r for r in report["checks"] if r["id"] == "gpu.inventory"]
        self.assertEqual(len(inv), 1, inv)
        self.assertEqual(inv[0]["status"], "error", inv)
        self.assertIn("/sys/bus/pci/devices", inv[0]["summary"])
        self.assertIn("Permission denied", inv[0]["summary"])
        for r in report["checks"]:
            self.assertNotEqual(r["summary"], "no NVIDIA GPU on the PCI bus", r)

    # --- missing pieces ----------------------------------------------------------------

    def test_no_pci_bus(self):
        with self.moved_aside("sys/bus/pci"):
            _, report = self.assert_survives(self.base, what="no /sys/bus/pci")
        self.assertEqual(report["gpus"], [])
        for r in report["checks"]:
            if r["id"].startswith("pcie."):
                self.assertEqual(r["status"], "skip", r)

    def test_no_proc(self):
        with self.moved_aside("proc"):
            self.assert_survives(self.base, what="no /proc")

    def test_no_sys(self):
        with self.moved_aside("sys"):
            self.assert_survives(self.base, what="no /sys")

    def test_empty_root(self):
        root = os.path.join(self.tmp, "empty-root")
        os.makedirs(root, exist_ok=True)
        self.assert_survives(root, what="empty root")

    # --- refused inputs ----------------------------------------------------------------

    def test_root_missing(self):
        missing = os.path.join(self.tmp, "no-such-root")
        r = subprocess.run([GPUVET, "check", "--root", missing], capture_output=True, text=True, timeout=30)
        self.assertEqual(r.returncode, 2, r.stderr)
        self.assertIn(missing, r.stderr)
        # Named like every other message of the command (ux-review: "gpuvet: --root ...").
        self.assertTrue(r.stderr.startswith("gpuvet check: --root "), r.stderr)

    def test_quiet_without_json_says_so(self):
        # -q alone writes nothing: a stderr line says that only the exit status tells.
        r = subprocess.run([GPUVET, "check", "-q", "--only", "cpu.governor"], capture_output=True, text=True,
                           timeout=60)
        self.assertIn(r.returncode, (0, 1), r.stderr)
        self.assertEqual(r.stdout, "")
        self.assertIn("gpuvet check: -q without --json writes no report", r.stderr)
        with_json = subprocess.run([GPUVET, "check", "-q", "--only", "cpu.governor", "--json",
                                    os.path.join(self.tmp, "q.json")], capture_output=True, text=True, timeout=60)
        self.assertNotIn("-q without --json", with_json.stderr)

    def test_root_is_file(self):
        path = os.path.join(self.tmp, "a-file")
        with open(path, "w") as f:
            f.write("not a directory\n")
        r = subprocess.run([GPUVET, "check", "--root", path], capture_output=True, text=True, timeout=30)
        self.assertEqual(r.returncode, 2, r.stderr)
        self.assertIn(path, r.stderr)

    def test_malformed_gpu_table(self):
        data = os.path.join(self.tmp, "data")
        os.makedirs(data, exist_ok=True)
        with open(os.path.join(SRCDIR, "data", "gpus.json")) as f:
            lines = f.read().splitlines(keepends=True)
        # Cut a line in half, a few lines in: a syntax error on a known line.
        broken = lines[:5] + [lines[5][: len(lines[5]) // 2] + "\n"] + lines[6:]
        with open(os.path.join(data, "gpus.json"), "w") as f:
            f.writelines(broken)
        r = subprocess.run([GPUVET, "check", "--root", self.base, "--data-dir", data],
                           capture_output=True, text=True, timeout=30)
        self.assertEqual(r.returncode, 2, r.stderr)
        self.assertIn(os.path.join(data, "gpus.json"), r.stderr)
        self.assertRegex(r.stderr, r"line \d+")

    def test_missing_gpu_table(self):
        data = os.path.join(self.tmp, "data-empty")
        os.makedirs(data, exist_ok=True)
        r = subprocess.run([GPUVET, "check", "--root", self.base, "--data-dir", data],
                           capture_output=True, text=True, timeout=30)
        self.assertEqual(r.returncode, 2, r.stderr)
        self.assertIn(os.path.join(data, "gpus.json"), r.stderr)


class BadRdmaInput(DamageBase):
    """The RDMA files of dgx-h100-ib (network checks): every value damaged is unknown, never a
    crash; the port's results say error or skip and name the file."""
    FIXTURE = "dgx-h100-ib"
    PORT = "sys/class/infiniband/mlx5_2/ports/1/"

    def test_damaged_port_values(self):
        for name in ("state", "phys_state", "rate", "link_layer"):
            for what, content in (("empty", b""), ("garbage", b"garbage\n"), ("binary", bytes(range(256))),
                                  ("out of range", b"99999999999: ACTIVE\n")):
                with self.subTest(name=name, what=what):
                    # link_layer unknown is judged (network.link_layer warns naming the port).
                    allowed = ("skip", "error", "warn") if name == "link_layer" else ("skip", "error")
                    self.damage(self.PORT + name, content, allowed=allowed, any_citing=True,
                                what=f"{what} {name}")

    def test_damaged_counters_and_device(self):
        for rel, content in (("counters/symbol_error", b"-1\n"), ("counters/link_downed", b"18446744073709551616\n"),
                             ("counters/port_rcv_errors", b"\x00\x01\n")):
            with self.subTest(rel=rel):
                self.damage(self.PORT + rel, content, allowed=("pass", "skip", "error"), what=f"bad {rel}")
        for rel in ("sys/class/infiniband/mlx5_2/fw_ver", "sys/class/infiniband/mlx5_2/hca_type"):
            with self.subTest(rel=rel):
                self.damage(rel, bytes(range(1, 256)), allowed=("pass", "warn", "skip", "error"), what=f"binary {rel}")

    def test_missing_ports(self):
        """No ports directory: the device's ports are unknown, and network.port_state says so."""
        with self.moved_aside("sys/class/infiniband/mlx5_2/ports"):
            code, report = self.assert_survives(self.base, (), "no ports directory")
        r = [c for c in report["checks"] if c["id"] == "network.port_state" and c["subject"] == "mlx5_2"]
        self.assertTrue(r and r[0]["status"] == "error" and "mlx5_2/ports" in r[0]["summary"], r)

if __name__ == "__main__":
    if len(sys.argv) < 3:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    GPUVET = os.path.abspath(sys.argv[1])
    SRCDIR = os.path.abspath(sys.argv[2])
    unittest.main(argv=[sys.argv[0], "-v"] + sys.argv[3:])
