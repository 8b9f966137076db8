#!/usr/bin/env python3
"""Fuzz one target for a bounded time, from its corpus, and report what it did.

    run_fuzz.py FUZZ_BINARY CORPUS_DIR SECONDS WORK_DIR [--merge] [--ledger FILE]

libFuzzer runs with the corpus read-only: new inputs go into WORK_DIR/new, crashes into
WORK_DIR/artifacts. Exit 1 when the target crashed, leaked, hit a sanitizer or timed out on
an input (the artifact is named); 0 otherwise. The last line gives executions, coverage
(edges and features) and new inputs, for docs/testing.md.

--merge (tools/fuzz.sh) then merges the new inputs into CORPUS_DIR, keeping only those that
add coverage (libFuzzer -merge=1): the corpus grows with what the fuzzer learned.
--ledger appends one tab-separated row for the run to FILE (tests/fuzz/ledger.tsv: date,
commit, target, seconds, executions, edges, features, new inputs, corpus size after), so the
executions each corpus has seen add up across runs and machines (tools/fuzz.sh ledger).
Used by tools/fuzz.sh and by the build-fuzz suite in CI (tools/run-tests.sh)."""
import os
import re
import shutil
import subprocess
import sys
import time


def append_ledger(path, target, seconds, execs, edges, features, n_new, corpus):
    commit = subprocess.run(["git", "rev-parse", "--short=12", "HEAD"], capture_output=True, text=True,
                            cwd=os.path.dirname(os.path.abspath(path))).stdout.strip() or "-"
    row = [time.strftime("%Y-%m-%d", time.gmtime()), commit, target.removeprefix("fuzz_"), str(seconds),
           execs, edges, features, str(n_new), str(len(os.listdir(corpus)))]
    with open(path, "a") as f:
        f.write("\t".join(row) + "\n")


def main():
    argv = sys.argv[1:]
    ledger = None
    if "--ledger" in argv:
        i = argv.index("--ledger")
        if i + 1 >= len(argv):
            print(__doc__, file=sys.stderr)
            return 2
        ledger = argv[i + 1]
        del argv[i:i + 2]
    args = [a for a in argv if a != "--merge"]
    merge = "--merge" in argv
    if len(args) != 4:
        print(__doc__, file=sys.stderr)
        return 2
    binary, corpus, seconds, work = args
    seconds = int(seconds)
    new = os.path.join(work, "new")
    artifacts = os.path.join(work, "artifacts") + "/"
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(new)
    os.makedirs(artifacts)
    name = os.path.basename(binary)
    cmd = [binary, "-max_total_time=%d" % seconds, "-timeout=20", "-rss_limit_mb=2048", "-print_final_stats=1",
           "-artifact_prefix=" + artifacts, new, corpus]
    if name == "fuzz_gpudb":
        cmd.insert(1, "-max_len=20000")
    elif name == "fuzz_datafiles":
        cmd.insert(1, "-max_len=65536")
    elif name == "fuzz_gather":
        cmd.insert(1, "-max_len=65536")
    p = subprocess.run(cmd, capture_output=True, text=True, errors="replace", timeout=seconds + 300)
    log = p.stderr
    execs = re.findall(r"stat::number_of_executed_units:\s*(\d+)", log)
    cov = re.findall(r"#\d+\s+\w+\s+cov: (\d+) ft: (\d+)", log)
    n_new = len(os.listdir(new))
    crashed = p.returncode != 0 or os.listdir(artifacts)
    if crashed:
        print(log[-4000:])
        print("FAIL %s: exit %d, artifacts: %s" % (name, p.returncode, ", ".join(sorted(os.listdir(artifacts)))))
        return 1
    if merge and n_new:
        m = subprocess.run([binary, "-merge=1", corpus, new] + ([c for c in cmd if c.startswith("-max_len")]),
                           capture_output=True, text=True, errors="replace")
        if m.returncode != 0:
            print(m.stderr[-2000:])
            print("FAIL %s: merging into %s" % (name, corpus))
            return 1
    edges, features = cov[-1] if cov else ("?", "?")
    if ledger and execs:
        append_ledger(ledger, name, seconds, execs[-1], edges, features, n_new, corpus)
    print("%s: %s executions in %d s, coverage %s edges / %s features, %d new inputs%s" %
          (name, execs[-1] if execs else "?", seconds, edges, features, n_new,
           " (merged into %s)" % corpus if merge and n_new else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
