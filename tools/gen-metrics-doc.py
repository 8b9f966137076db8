#!/usr/bin/env python3
"""Write docs/metrics.md from the registry (`gpuvet query --help-metrics`).

Usage: tools/gen-metrics-doc.py GPUVET
"""
import os
import subprocess
import sys

HEAD = """# Metrics

Every GPU metric gpuvet reads, from one registry (`src/metrics/registry.c`). `query`
shows them under their nvidia-smi names, `info --json` under their ids (`nvml.metrics` for
the system, `gpus[].nvml.metrics` per GPU), and the sampler reads them for `query -l`. The
ids are Prometheus-style names ending in their unit; the dcgm-exporter column names the
DCGM field with the same reading, for dashboards that move between the two.

Types: `gauge` goes up and down; `counter` only grows until the driver reloads or the GPU
resets; `info` does not change while the GPU is up; `state` is a mode or a flag. Units are
base units (bytes, watts, hertz, celsius); `percent` is 0-100 as NVML gives it.

A metric without a value is `null` in JSON, and the GPU's `errors` say which NVML function
failed or hung; query prints `[N/A]` or nvidia-smi's bracketed error.

This table is generated: `python3 tools/gen-metrics-doc.py build/gpuvet` (list it with
`gpuvet query --help-metrics`). To add a metric, see HACKING.md.

| id | type | unit | nvidia-smi `--query-gpu` | dcgm-exporter | meaning |
| --- | --- | --- | --- | --- | --- |
"""


def main():
    gpuvet = sys.argv[1]
    out = subprocess.run([gpuvet, "query", "--help-metrics"], capture_output=True, text=True, check=True).stdout
    lines = [HEAD.rstrip("\n")]
    for line in out.splitlines()[1:]:
        mid, mtype, unit, smi, dcgm, text = line.split("\t")
        smi_cell = ", ".join("`%s`" % n for n in smi.split(" ")) if smi != "-" else ""
        lines.append("| `%s` | %s | %s | %s | %s | %s |" % (
            mid, mtype, "" if unit == "-" else unit, smi_cell, "" if dcgm == "-" else "`%s`" % dcgm,
            text.replace("|", "\\|")))
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "docs", "metrics.md")
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        f.write("\n".join(lines) + "\n")
    os.replace(tmp, path)


if __name__ == "__main__":
    main()
