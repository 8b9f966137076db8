#!/usr/bin/env python3
"""Rewrite the series table of docs/serve.md from `gpuvet serve --help-metrics`.

Usage: tools/gen-serve-doc.py BUILD/gpuvet [docs/serve.md]

The table sits between the lines "<!-- serve-metrics:begin -->" and
"<!-- serve-metrics:end -->"; everything else in the file is left as it is.
"""
import os
import subprocess
import sys

BEGIN, END = "<!-- serve-metrics:begin -->", "<!-- serve-metrics:end -->"


def main():
    gpuvet = sys.argv[1]
    doc = sys.argv[2] if len(sys.argv) > 2 else os.path.join(os.path.dirname(__file__), "..", "docs", "serve.md")
    out = subprocess.run([gpuvet, "serve", "--help-metrics"], capture_output=True, text=True, check=True).stdout
    rows = ["| series | type | unit | gpuvet metric (docs/metrics.md) | meaning |", "| --- | --- | --- | --- | --- |"]
    for line in out.splitlines():
        name, typ, unit, mid, text = line.split("\t")
        rows.append("| `%s` | %s | %s | `%s` | %s |" % (name, typ, unit, mid, text.replace("|", "\\|")))
    text = open(doc).read()
    head, rest = text.split(BEGIN, 1)
    _, tail = rest.split(END, 1)
    open(doc, "w").write(head + BEGIN + "\n" + "\n".join(rows) + "\n" + END + tail)


if __name__ == "__main__":
    main()
