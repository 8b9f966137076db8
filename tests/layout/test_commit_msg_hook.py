#!/usr/bin/env python3
"""The commit message hook (tools/githooks/commit-msg, HACKING.md "Commits") takes the messages
of the convention and refuses the others, each with its reason.

Usage: test_commit_msg_hook.py HOOK"""
import os
import subprocess
import sys
import tempfile

GOOD = [
    "Add a monotonic clock in core",
    "query: split the option lists in one loop",
    "checks/gpu/nvml: count bound GPUs with the shared helper",
    "Embed the data tables at build time",
    "Move the clock\n\nTwelve files kept a clock of their own.\n",
    "# Please enter the commit message\n\nRemove dead code\n\n# comment\n",
    "Fix a leak\n\nbody\n# ------------------------ >8 ------------------------\nAdded: diff text\n",
    "Merge branch 'i40-helpers'",
    "fixup! Add a monotonic clock in core",
    "x" * 72,
]
BAD = [
    ("Added a monotonic clock in core", "not what was done"),
    ("query: fixed the option lists", "not what was done"),
    ("Fixes the option lists", "imperative"),
    ("Add " + "x" * 69, "73 characters"),
    ("Add a clock\nwith a body right under it\n", "blank line"),
]


def run(hook, message):
    with tempfile.NamedTemporaryFile("w", suffix=".msg", delete=False) as f:
        f.write(message)
    try:
        p = subprocess.run(["sh", hook, f.name], capture_output=True, text=True, timeout=30)
    finally:
        os.unlink(f.name)
    return p.returncode, p.stderr


def main():
    hook = sys.argv[1]
    failures = []
    for message in GOOD:
        rc, err = run(hook, message)
        if rc != 0:
            failures.append("refused a good message %r: %s" % (message, err.strip()))
    for message, reason in BAD:
        rc, err = run(hook, message)
        if rc == 0:
            failures.append("took a bad message %r" % message)
        elif reason not in err:
            failures.append("refused %r without saying %r: %s" % (message, reason, err.strip()))
    for f in failures:
        print("FAIL " + f)
    if failures:
        return 1
    print("ok: %d good messages taken, %d bad ones refused with their reason" % (len(GOOD), len(BAD)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
