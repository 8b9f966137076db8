#!/usr/bin/env python3
"""gpuvet bench from the command line: --list, bad options (exit 2 with a message naming
the option), a small host-memory run whose JSON (schema gpuvet.bench/2) holds verified
samples, and the runner's deadline: a benchmark whose child hangs (test-only switch
GPUVET_BENCH_TEST_HANG, SIGTERM ignored) is killed and reported as an error naming the
timeout, exit 1, within the deadline plus the grace period. A torn report
(GPUVET_BENCH_TEST_GARBLE) is an "untrustworthy report" error.

Usage: test_bench_cli.py GPUVET SRCDIR"""

import json
import os
import subprocess
import sys
import tempfile
import time
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "fakes"))
import fakeenv  # noqa: E402  (time_scale)

GPUVET = None
SRCDIR = None
HOOKS = None  # gpuvet-test-hooks: the runs that set a test switch use it
GRACE_S = 2  # BENCH_GRACE_S in src/bench/runner.h


def run(*args, env=None, timeout=120):
    e = dict(os.environ)
    for k in ("GPUVET_BENCH_TEST_HANG", "GPUVET_BENCH_TEST_GARBLE"):
        e.pop(k, None)
    e.update(env or {})
    exe = HOOKS if any(k.startswith("GPUVET_BENCH_TEST_") for k in (env or {})) else GPUVET
    return subprocess.run([exe, "bench", *args], capture_output=True, text=True, env=e, timeout=timeout)


class BenchCli(unittest.TestCase):
    def test_list(self):
        p = run("--list")
        self.assertEqual(p.returncode, 0, p.stderr)
        names = [line.split()[0] for line in p.stdout.splitlines()]
        self.assertIn("host-memory", names)
        self.assertEqual(len(names), len(set(names)))

    def test_bad_options(self):
        cases = [
            (["no-such-bench"], 'no benchmark named "no-such-bench"'),
            (["host-memory,nope"], 'no benchmark named "nope"'),
            ([], "name a benchmark"),
            (["--json", "host-memory"], '--json took "host-memory" for its file: write --json - host-memory'),
            (["host-memory", "extra"], 'unexpected argument "extra"'),
            (["host-memory", "--precision", "fp7"], '--precision: expected fp64, fp32, tf32, fp16, bf16 or fp8, not "fp7"'),
            (["host-memory", "--size", "12Q"], '--size: expected a size from 4K to 1T'),
            (["host-memory", "--size", "0"], '--size: expected a size from 4K to 1T'),
            (["host-memory", "--size=-5M"], '--size: expected a size from 4K to 1T'),
            (["host-memory", "--size", "-5M"], 'option --size needs a value, not the option "-5M"'),
            (["host-memory", "--size", "2T"], '--size: expected a size from 4K to 1T'),
            (["host-memory", "--size", "1.5G"], '--size: expected a size from 4K to 1T'),
            (["host-memory", "--reps", "0"], "--reps: expected a whole number"),
            (["host-memory", "--reps", "ten"], "--reps: expected a whole number"),
            (["host-memory", "--warmup", "99999999999"], "--warmup: expected a whole number"),
            (["host-memory", "--threads", "0"], "--threads: expected a whole number"),
            (["host-memory", "--backend", "vulkan"], "--backend: expected cuda, opencl or auto"),
            (["host-memory", "--gpus", "x"], "--gpus: expected device indices"),
            (["host-memory", "--gpus", "0-999"], "--gpus: expected device indices"),
            (["host-memory", "--timeout", "0"], "--timeout: expected a duration from 1s to 1d"),
            (["host-memory", "--reps"], "needs a value"),
            (["host-memory", "--frobnicate"], "unknown option --frobnicate"),
        ]
        for args, message in cases:
            with self.subTest(args=args):
                p = run(*args)
                self.assertEqual(p.returncode, 2, (p.stdout, p.stderr))
                self.assertIn(message, p.stderr)
                self.assertEqual(p.stdout, "")

    def test_help_from_the_tables(self):
        """The help of the commands with typed option tables: within 80 columns, naming every
        option `gpuvet help --options-json` gives; a command with deadlines of its own does
        not claim the gathering deadline's default of 30s for --timeout."""
        dump = subprocess.run([GPUVET, "help", "--options-json"], capture_output=True, text=True, timeout=60)
        self.assertEqual(dump.returncode, 0, dump.stderr)
        specs = {s["name"]: s for s in json.loads(dump.stdout)["specs"]}
        for name in ("bench", "bench nccl", "bench train", "bench rdma", "burn", "detect", "estimate"):
            with self.subTest(command=name):
                self.assertIn(name, specs)
                p = subprocess.run([GPUVET, *name.split(), "--help"], capture_output=True, text=True, timeout=60)
                self.assertEqual(p.returncode, 0, p.stderr)
                self.assertEqual([line for line in p.stdout.splitlines() if len(line) > 80], [])
                for o in specs[name]["options"]:
                    self.assertIn("--" + o["name"], p.stdout)
                timeout = next(o for o in specs[name]["options"] if o["name"] == "timeout")
                if name.startswith("bench"):
                    self.assertIsNone(timeout["default"])
                    self.assertNotIn("default: 30s", p.stdout.split("--timeout", 1)[1].split("\n  -", 1)[0])

    def test_units_and_json(self):
        """--size takes the size units, --timeout the duration units; --json alone is --json -."""
        p = run("host-memory", "--size", "8MiB", "--reps", "1", "--precision", "fp64", "--timeout", "2m", "--json")
        self.assertEqual(p.returncode, 0, p.stderr)
        doc = json.loads(p.stdout)
        self.assertEqual(doc["options"]["size_bytes"], 8 << 20)
        self.assertEqual(doc["options"]["timeout_s"], 120)

    def test_bad_baselines_file(self):
        with tempfile.TemporaryDirectory() as d:
            for name in ("gpus.json", "xid.json"):
                with open(os.path.join(d, name), "w") as f:
                    f.write(open(os.path.join(SRCDIR, "data", name)).read())
            with open(os.path.join(d, "baselines.json"), "w") as f:
                f.write('{"schema": "gpuvet.baselines/1",\n "limits": [\n  {"bench": 3}\n ],\n "baselines": []}\n')
            p = run("host-memory", "--data-dir", d)
            self.assertEqual(p.returncode, 2, p.stderr)
            self.assertIn("baselines.json: line", p.stderr)

    def test_host_memory_json(self):
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "bench.json")
            p = run("host-memory", "--size", "64M", "--reps", "3", "--json", path)
            self.assertIn(p.returncode, (0, 1), p.stderr)
            with open(path) as f:
                doc = json.load(f)
        self.assertEqual(doc["schema"], "gpuvet.bench/2")
        # the envelope check's report has (docs/report-schema.md)
        self.assertEqual(doc["tool"]["name"], "gpuvet")
        self.assertEqual(doc["command"], "bench")
        self.assertEqual(doc["options"]["size_bytes"], 64 << 20)
        self.assertEqual([b["name"] for b in doc["benchmarks"]], ["host-memory"])
        ms = {(m["subject"], m["name"]): m for m in doc["measurements"]}
        for name in ("copy", "scale", "add", "triad", "fp64_fma", "fp32_fma"):
            m = ms[("host", name)]
            self.assertTrue(m["verified"], m)
            self.assertEqual(len(m["samples"]), 3)
            self.assertTrue(all(s > 0 for s in m["samples"]))
            self.assertEqual(m["status"], "pass", m["summary"])
            self.assertEqual(m["stats"]["n"], 3)
            self.assertLessEqual(m["stats"]["min"], m["stats"]["median"])
            self.assertIn("no reference", m["summary"])
        self.assertEqual(ms[("host", "triad")]["params"]["array_bytes"], str(64 << 20))
        self.assertEqual(ms[("host", "triad")]["params"]["bytes_per_element"], "24")
        self.assertEqual(ms[("host", "copy")]["params"]["bytes_per_element"], "16")
        self.assertEqual(ms[("host", "triad")]["unit"], "GB/s")
        self.assertEqual(doc["summary"]["verdict"], "pass")
        self.assertEqual(doc["summary"]["pass"], len(doc["measurements"]))
        self.assertEqual(p.returncode, 0)
        # The text report: one table, one verdict line.
        self.assertIn("host-memory:", p.stdout)
        self.assertIn("triad", p.stdout)
        self.assertIn("Verdict: PASS — ", p.stdout)

    def test_json_to_stdout(self):
        p = run("host-memory", "--size", "8M", "--reps", "1", "--precision", "fp64", "--json", "-")
        self.assertEqual(p.returncode, 0, p.stderr)
        doc = json.loads(p.stdout)
        names = [m["name"] for m in doc["measurements"]]
        self.assertIn("fp64_fma", names)
        self.assertNotIn("fp32_fma", names)

    def test_hang_is_killed(self):
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "bench.json")
            t0 = time.monotonic()
            p = run("host-memory", "--timeout", "2", "--json", path, env={"GPUVET_BENCH_TEST_HANG": "host-memory"})
            took = time.monotonic() - t0
            self.assertEqual(p.returncode, 1, (p.stdout, p.stderr))
            self.assertLess(took, (2 + GRACE_S + 3) * fakeenv.time_scale(), "the runner did not keep its deadline")
            with open(path) as f:
                doc = json.load(f)
        errors = [m for m in doc["measurements"] if m["status"] == "error"]
        self.assertEqual(len(errors), 1)
        self.assertIn("timed out after 2 s in host-memory", errors[0]["summary"])
        self.assertEqual(doc["summary"]["verdict"], "error")
        self.assertIn("timed out after 2 s in host-memory", p.stdout)

    def test_release_has_no_hang_switch(self):
        e = dict(os.environ, GPUVET_BENCH_TEST_HANG="host-memory")
        p = subprocess.run([GPUVET, "bench", "host-memory", "--size", "8M", "--reps", "1"], capture_output=True,
                           text=True, env=e, timeout=120)
        self.assertNotIn("timed out", p.stdout, "the released gpuvet obeyed a test switch")

    def test_torn_report(self):
        p = run("host-memory", "--size", "8M", "--reps", "1", env={"GPUVET_BENCH_TEST_GARBLE": "host-memory"})
        self.assertEqual(p.returncode, 1, p.stderr)
        self.assertIn("untrustworthy report", p.stdout)


if __name__ == "__main__":
    GPUVET = os.path.abspath(sys.argv.pop(1))
    SRCDIR = os.path.abspath(sys.argv.pop(1))
    HOOKS = os.path.abspath(sys.argv.pop(1))
    unittest.main(verbosity=2)
