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
base units (bytes, watts, joules, hertz, celsius); `percent` is 0-100 as NVML gives it,
`ratio` 0-1 as DCGM's profiling fields.

The `activity_*_ratio`, `sm_occupancy_ratio` and `*_bytes_per_second` metrics are rates
over the window between two GPM samples of the GPU (Hopper and later): only the sampler
reads them, from its second round on (`gpuvet serve`, docs/serve.md "Profiling series");
in `info --json` they are `null`.

A metric without a value is `null` in JSON, and the GPU's `errors` say which NVML function
failed or hung; query prints `[N/A]` or nvidia-smi's bracketed error.

## Sampling

`src/metrics/sampler.c` reads a chosen set of metrics (their NVML reading groups) of every
GPU at an interval, on a thread of its own, every call under the NVML deadlines
(docs/nvml.md), and publishes each round as an immutable sample. A reader takes the latest
sample without waiting for the round in progress, however slow a GPU is. A GPU that does
not answer within its deadline is published as it is: its unread metrics are missing,
naming the call that hung, never the previous value again and never zero. A round in which
a call never returned is the last one (another would strand one more thread inside the
driver); the sampler then says so and its user leaves without nvmlShutdown. NVML stays
initialised for the sampler's life. `query -l`/`-lms` prints its rounds; the exporter and
`top` are to read it too.

## The metrics

This table is generated: `python3 tools/gen-metrics-doc.py build/gpuvet` (list it with
`gpuvet query --help-metrics`). To add a metric, see HACKING.md.

A metric `--query-gpu` has no field for names where `nvidia-smi -q` shows it (`-q`: its
section and line), or says why nvidia-smi shows it nowhere (none); `query` does not list it,
`info --json` and the exporter do.

| id | type | unit | nvidia-smi `--query-gpu` | dcgm-exporter | meaning |
| --- | --- | --- | --- | --- | --- |
"""


def main():
    gpuvet = sys.argv[1]
    out = subprocess.run([gpuvet, "query", "--help-metrics"], capture_output=True, text=True, check=True).stdout
    lines = [HEAD.rstrip("\n")]
    for line in out.splitlines()[1:]:
        mid, mtype, unit, smi, smi_q, dcgm, text = line.split("\t")
        smi_cell = ", ".join("`%s`" % n for n in smi.split(" ")) if smi != "-" else ""
        if smi_q.startswith("none: "):
            smi_cell = "none: " + smi_q[len("none: "):]
        elif smi_q != "-":
            smi_cell = "`-q`: %s" % smi_q.replace(">", "&gt;")
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
