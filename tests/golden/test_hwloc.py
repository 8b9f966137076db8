#!/usr/bin/env python3
"""Judge real machines captured by hwloc-gather-topology and compare with hwloc's answer.

    test_hwloc.py GPUVET [DATA_DIR]

DATA_DIR (default: tests/realdata/hwloc, see tests/realdata/SOURCES.md) holds NAME.tar.bz2,
the trees hwloc's own test suite gathered from real machines, and NAME.console, what
lstopo printed for them. Each tree is unpacked to a temporary directory and judged with
`gpuvet check --root`; from the JSON report this asserts that

  - the NUMA nodes (host.numa_nodes) are hwloc's: the same node numbers, each node's CPUs
    including hwloc's PUs (captures drop some CPU directories to stay small, while the
    node's cpulist still names them), memory within 1 GiB of hwloc's (rounded) size;
    NAME-kept.console, when present, lists the GPU-memory nodes too (POWER9 + V100);
  - gpuvet finds exactly hwloc's NVIDIA GPUs (PCI class 0300/0302 with vendor 10de, or
    id 0000:0000 where the capture holds the class alone), at the same PCI address and
    on the same NUMA node as the CPU node hwloc attaches them to.

Exit 77 (skipped) when the data is not there."""

import json
import os
import re
import subprocess
import sys
import tarfile
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.normpath(os.path.join(HERE, "..", ".."))
# What the consoles must yield, so that a parsing slip cannot pass silently:
# (NUMA nodes, NVIDIA GPUs). POWER9: 2 CPU nodes + 6 V100 memory nodes, 6 V100s;
# the Xeon host carries NEC VE cards (class 0b40), no NVIDIA GPU.
MACHINES = {"nvidiagpunumanodes": (8, 6), "32intel64-2p8co2t+8ve": (2, 0)}

NUMA_RE = re.compile(r"NUMANode(\((\w+)\))? L#\d+ \(P#(\d+) local=(\d+)(KB|MB|GB|TB|KiB|MiB|GiB|TiB)")
PCI_RE = re.compile(r"PCI L#\d+ \(busid=([0-9a-f:.]+) id=([0-9a-f]{4}):([0-9a-f]{4}) class=(03\d\d)\(")
PU_RE = re.compile(r"PU L#\d+ \(P#(\d+)\)")
UNIT_MIB = {"KB": 1.0 / 1024, "KiB": 1.0 / 1024, "MB": 1, "MiB": 1, "GB": 1024, "GiB": 1024,
            "TB": 1024 * 1024, "TiB": 1024 * 1024}


def parse_cpulist(s):
    cpus = set()
    for part in filter(None, (s or "").split(",")):
        lo, _, hi = part.partition("-")
        cpus.update(range(int(lo), int(hi or lo) + 1))
    return cpus


def parse_console(path):
    """From lstopo's console output, by indentation: {node: {mem_mib, gpu_memory, pus}} and
    [(busid, vendor, node)] for display controllers, node being the CPU NUMA node that
    is a memory child of the nearest ancestor that has one."""
    nodes, gpus = {}, []
    stack = []  # [indent, [numa nodes that are children of this object]]
    with open(path) as f:
        for line in f:
            if not line.startswith((" ", "Machine")):
                if stack:
                    break  # the tree is over: lstopo's summary follows
                continue
            indent = len(line) - len(line.lstrip(" "))
            while stack and stack[-1][0] >= indent:
                stack.pop()
            m = NUMA_RE.search(line)
            if m:
                node = int(m.group(3))
                nodes[node] = {"mem_mib": int(m.group(4)) * UNIT_MIB[m.group(5)],
                               "gpu_memory": m.group(2) == "GPUMemory", "pus": set()}
                if stack:
                    stack[-1][1].append(node)
            m = PU_RE.search(line)
            if m:
                for frame in reversed(stack):
                    cpu_nodes = [n for n in frame[1] if not nodes[n]["gpu_memory"]]
                    if cpu_nodes:
                        for n in cpu_nodes:
                            nodes[n]["pus"].add(int(m.group(1)))
                        break
            m = PCI_RE.search(line)
            if m:
                node = None
                for frame in reversed(stack):
                    cpu_nodes = [n for n in frame[1] if not nodes[n]["gpu_memory"]]
                    if cpu_nodes:
                        node = cpu_nodes[0] if len(cpu_nodes) == 1 else None
                        break
                gpus.append((m.group(1), m.group(2), node))
            stack.append([indent, []])
    return nodes, gpus


def check_machine(gpuvet, data_dir, name):
    errors = []
    console = os.path.join(data_dir, name + "-kept.console")
    if not os.path.exists(console):
        console = os.path.join(data_dir, name + ".console")
    want_nodes, want_gpus = parse_console(console)
    # NVIDIA display controllers; id 0000:0000 means the capture kept only the class.
    want_gpus = [(b, n) for b, v, n in want_gpus if v in ("10de", "0000")]
    if (len(want_nodes), len(want_gpus)) != MACHINES[name]:
        return ["%s: parsed %d NUMA nodes and %d GPUs, expected %s" % (
            os.path.basename(console), len(want_nodes), len(want_gpus), MACHINES[name])]

    with tempfile.TemporaryDirectory() as tmp:
        with tarfile.open(os.path.join(data_dir, name + ".tar.bz2")) as tar:
            # Trusted test data; say so, as Python 3.12+ asks (and 3.14 would filter).
            if hasattr(tarfile, "fully_trusted_filter"):
                tar.extractall(tmp, filter="fully_trusted")
            else:
                tar.extractall(tmp)
        root = os.path.join(tmp, name)
        out = os.path.join(tmp, "report.json")
        proc = subprocess.run([gpuvet, "check", "--root", root, "--json", out, "--quiet"],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True)
        if proc.returncode not in (0, 1):
            return ["gpuvet exited %d: %s" % (proc.returncode, proc.stderr.strip())]
        with open(out) as f:
            report = json.load(f)

    got_nodes = report.get("host", {}).get("numa_nodes")
    if not isinstance(got_nodes, list):
        errors.append("host.numa_nodes missing from the report (got %r)" % (got_nodes,))
        got_nodes = []
    got = {}
    for n in got_nodes:
        try:
            got[n["node"]] = n
        except (TypeError, KeyError):
            errors.append("malformed host.numa_nodes entry %r" % (n,))
    if got_nodes and sorted(got) != sorted(want_nodes):
        errors.append("NUMA nodes: gpuvet %s, hwloc %s" % (sorted(got), sorted(want_nodes)))
    for node, w in sorted(want_nodes.items()):
        g = got.get(node)
        if g is None:
            continue
        cpus = parse_cpulist(g.get("cpulist"))
        if not w["pus"] <= cpus:
            errors.append("node %d: cpulist %r lacks hwloc's PUs %s" % (node, g.get("cpulist"),
                                                                       sorted(w["pus"] - cpus)))
        if w["gpu_memory"] and cpus:
            errors.append("node %d: GPU-memory node has CPUs %r" % (node, g.get("cpulist")))
        mem = g.get("mem_total_mib")
        if not isinstance(mem, int) or abs(mem - w["mem_mib"]) > 1024:
            errors.append("node %d: mem_total_mib %r, hwloc %.0f MiB" % (node, mem, w["mem_mib"]))

    got_gpus = {g.get("pci_bus_id"): g for g in report.get("gpus", [])}
    if sorted(got_gpus) != sorted(b for b, _ in want_gpus):
        errors.append("GPUs: gpuvet %s, hwloc %s" % (sorted(got_gpus), sorted(b for b, _ in want_gpus)))
    for busid, node in want_gpus:
        g = got_gpus.get(busid)
        if g is not None and g.get("numa_node") != node:
            errors.append("GPU %s: numa_node %r, hwloc %r" % (busid, g.get("numa_node"), node))
    print("%s %s: %d NUMA nodes, %d NVIDIA GPUs (hwloc: %d, %d)" % (
        "ok  " if not errors else "FAIL", name, len(got), len(got_gpus), len(want_nodes), len(want_gpus)))
    return errors


def main(argv):
    if len(argv) < 2:
        sys.stderr.write("usage: test_hwloc.py GPUVET [DATA_DIR]\n")
        return 2
    gpuvet = os.path.abspath(argv[1])
    data_dir = argv[2] if len(argv) > 2 else os.path.join(REPO, "tests", "realdata", "hwloc")
    missing = [n for n in MACHINES if not os.path.exists(os.path.join(data_dir, n + ".tar.bz2"))]
    if missing:
        print("skipped: hwloc captures not found in %s (%s)" % (data_dir, ", ".join(missing)))
        return 77
    failed = False
    for name in MACHINES:
        for e in check_machine(gpuvet, data_dir, name):
            print("  " + e)
            failed = True
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
