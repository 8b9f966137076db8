#!/usr/bin/env python3
"""One benchmark registry (HACKING.md, "A benchmark"): every benchmark, those with a command
of their own (train, nccl, rdma) included, is a `const struct bench_info bench_<name>` listed
once in src/bench/bench.def; src/cmd/bench.c dispatches none by a name of its own writing;
and `gpuvet bench --list` shows exactly the registry, `gpuvet bench all`'s first. Fails
naming each benchmark or line that is off the registry.

Usage: test_bench_registry.py SRC_DIR GPUVET"""
import os
import re
import subprocess
import sys

ENTRY = re.compile(r"^\s*(BENCH|BENCH_COMMAND)\((\w+)\)\s*$")
DEFINITION = re.compile(r"^const struct bench_info bench_(\w+) = \{")
NAME = re.compile(r'^\s*\.name = "([^"]+)"')


def read_def(src):
    entries = []
    with open(os.path.join(src, "bench", "bench.def"), encoding="utf-8") as f:
        for line in f:
            m = ENTRY.match(line)
            if m:
                entries.append((m.group(1), m.group(2)))
    return entries


def read_definitions(src):
    """bench_<id> -> (its .name, where it is defined), for every definition under src/."""
    found = {}
    for top, dirs, files in os.walk(src):
        dirs.sort()
        for fname in sorted(files):
            if not fname.endswith(".c"):
                continue
            path = os.path.join(top, fname)
            with open(path, encoding="utf-8") as f:
                lines = f.readlines()
            for i, line in enumerate(lines):
                m = DEFINITION.match(line)
                if not m:
                    continue
                name = None
                for follow in lines[i + 1:i + 4]:
                    n = NAME.match(follow)
                    if n:
                        name = n.group(1)
                        break
                found.setdefault(m.group(1), []).append((name, "%s:%d" % (os.path.relpath(path, src), i + 1)))
    return found


def main():
    src, gpuvet = sys.argv[1], sys.argv[2]
    failures = []
    entries = read_def(src)
    defined = read_definitions(src)
    ids = [i for _, i in entries]
    for i in sorted(set(ids)):
        if ids.count(i) > 1:
            failures.append("bench.def lists %s %d times" % (i, ids.count(i)))
    for i in ids:
        if len(defined.get(i, [])) != 1:
            failures.append("bench.def lists %s, defined %d times in src/" % (i, len(defined.get(i, []))))
    for i, where in sorted(defined.items()):
        if i not in ids:
            failures.append("%s defines bench_%s, which bench.def does not list" % (where[0][1], i))
    names = {i: defined[i][0][0] for i in ids if len(defined.get(i, [])) == 1}
    order = [names.get(i) for kind, i in entries if kind == "BENCH"]
    order += [names.get(i) for kind, i in entries if kind == "BENCH_COMMAND"]

    words = "|".join(re.escape(n) for n in order if n)
    literal = re.compile(r'(strcmp\([^;]*"(%s)"|printf\([^;]*"(%s)"[,)])' % (words, words))
    with open(os.path.join(src, "cmd", "bench.c"), encoding="utf-8") as f:
        for number, line in enumerate(f, 1):
            if literal.search(line):
                failures.append("cmd/bench.c:%d names a benchmark by hand: %s" % (number, line.strip()))

    p = subprocess.run([gpuvet, "bench", "--list"], capture_output=True, text=True, timeout=60)
    listed = [line.split()[0] for line in p.stdout.splitlines() if line.strip()]
    if p.returncode != 0:
        failures.append("gpuvet bench --list exited %d: %s" % (p.returncode, p.stderr.strip()))
    elif listed != order:
        failures.append("gpuvet bench --list shows %s; the registry holds %s" % (listed, order))

    for f in failures:
        print("FAIL " + f)
    if failures:
        print("%d benchmark(s) off the one registry: list each in src/bench/bench.def (BENCH, or "
              "BENCH_COMMAND for one with options of its own)" % len(failures))
        return 1
    print("ok: %d benchmarks, one registry; --list shows it: %s" % (len(order), " ".join(order)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
