#!/usr/bin/env python3
"""The --help of serve, fleet, report, slurm-health, top and query, generated from their
option tables (src/cmd/options.h): each is in `gpuvet help --options-json`, its --help
names every option the table has and fits 80 columns, every docs/ page it points at
exists, and the durations take units. Before the tables, top's help left out --root,
--nvml-lib and the NVML deadlines it accepts, slurm-health's pointed at docs/check.md
(there is no such page), and serve refused `--check-interval 5m`.

Usage: test_help_tables.py GPUVET SRCDIR"""

import json
import os
import re
import subprocess
import sys
import unittest

GPUVET = None
SRCDIR = None
COMMANDS = ("serve", "fleet", "report", "slurm-health", "top", "query")


def run(*args):
    return subprocess.run([GPUVET, *args], capture_output=True, text=True, timeout=60)


class HelpTables(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        p = run("help", "--options-json")
        assert p.returncode == 0, p.stderr
        cls.specs = {s["name"]: s for s in json.loads(p.stdout)["specs"]}

    def test_help_from_the_table(self):
        for cmd in COMMANDS:
            with self.subTest(cmd=cmd):
                self.assertIn(cmd, self.specs, "no typed option table")
                p = run(cmd, "--help")
                self.assertEqual(p.returncode, 0, p.stderr)
                self.assertEqual(p.stdout, run("help", cmd).stdout, "gpuvet help %s differs from --help" % cmd)
                for line in p.stdout.splitlines():
                    self.assertLessEqual(len(line), 80, line)
                for o in self.specs[cmd]["options"]:
                    self.assertRegex(p.stdout, r"(?m)^ +(-\w, )?--%s\b" % re.escape(o["name"]))
                for page in set(re.findall(r"docs/[\w./-]*\.md", p.stdout)):
                    self.assertTrue(os.path.isfile(os.path.join(SRCDIR, page)), "%s --help: %s" % (cmd, page))

    def test_top_lists_what_it_accepts(self):
        out = run("top", "--help").stdout
        for name in ("--root", "--nvml-lib", "--nvml-call-timeout-ms", "--nvml-gpu-timeout-ms",
                     "--nvml-init-timeout-ms", "--data-dir"):
            self.assertIn(name, out)

    def test_query_takes_no_common_option(self):
        # query parses nvidia-smi's syntax itself: no --timeout, --root or --data-dir
        names = {o["name"] for o in self.specs["query"]["options"]}
        self.assertFalse(names & {"timeout", "root", "data-dir", "no-nvml"}, names)
        for opt in ("--root=/", "--timeout=5"):
            p = run("query", opt, "--help-query-gpu")
            self.assertEqual(p.returncode, 2, opt)

    def test_durations_take_units(self):
        # each run stops after parsing: --help-metrics, or a refusal that names another option
        p = run("serve", "-T", "1m", "--interval-ms", "500ms", "--check-interval", "5m", "--check-timeout", "2m",
                "--connection-timeout", "30s", "--stale-after-ms", "2s", "--help-metrics")
        self.assertEqual(p.returncode, 0, p.stderr)
        p = run("query", "-lms", "500ms", "-l", "1m", "--nvml-call-timeout-ms", "1s", "--help-query-gpu")
        self.assertEqual(p.returncode, 0, p.stderr)
        for args in (["-d", "500ms"], ["-d", "0.5"], ["-d", "2"]):
            p = run("top", *args, "--no-nvml")
            self.assertEqual(p.returncode, 2)
            self.assertIn("--no-nvml", p.stderr, args)
        p = run("top", "-d", "50ms", "--no-nvml")
        self.assertEqual(p.returncode, 2)
        self.assertIn("-d: expected a duration from 100ms to 1h", p.stderr)  # named as typed
        p = run("slurm-health", "--scontrol-timeout", "5s", "--prolog", "--epilog")
        self.assertEqual(p.returncode, 2)
        self.assertIn("one mode at a time", p.stderr)


if __name__ == "__main__":
    GPUVET, SRCDIR = sys.argv[1], sys.argv[2]
    unittest.main(argv=sys.argv[:1], verbosity=2)
