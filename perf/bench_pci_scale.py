#!/usr/bin/env python3
"""How `gpuvet check` scales with the number of PCI devices (reliability review: 20,000
entries in /sys/bus/pci/devices took 4.8 s when matching each device's parent was a scan).

Usage: perf/bench_pci_scale.py [--gpuvet build/gpuvet] [--sizes 0,2500,5000,10000,20000] [--runs 3]

The dgx-h100 fixture gets N extra PCI functions (an Ethernet controller each: vendor,
device, class, a sysfs directory under a root port of the fixture and the bus symlink).
For each N: the median wall time of `check --level quick --root R --quiet` over --runs.
Linear work gives time roughly proportional to N; a quadratic step shows as 4x per
doubling. Results go in docs/perf.md.
"""
import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
import machine  # perf/machine.py: the line naming this machine

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)


def device(path, cls):
    os.makedirs(path)
    for name, value in (("vendor", "0x8086"), ("device", "0x1521"), ("class", cls), ("numa_node", "0"),
                        ("local_cpulist", "0-3")):
        with open(os.path.join(path, name), "w") as fh:
            fh.write(value + "\n")


def add_devices(root, n):
    """n functions in domain 1 (no clash with the fixture), each below one bridge
    0001:00:00.0, so that every one has a PCI parent to find."""
    bus = os.path.join(root, "sys", "bus", "pci", "devices")
    bridge = "0001:00:00.0"
    if n:
        device(os.path.join(root, "sys", "devices", "pci0001:00", bridge), "0x060400")
        os.symlink("../../../devices/pci0001:00/" + bridge, os.path.join(bus, bridge))
    for i in range(n):
        b, d, f = (i >> 8) & 0xff, (i >> 3) & 0x1f, i & 0x7
        addr = "0001:%02x:%02x.%x" % (b + 1, d, f)
        device(os.path.join(root, "sys", "devices", "pci0001:00", bridge, addr), "0x020000")
        os.symlink("../../../devices/pci0001:00/%s/%s" % (bridge, addr), os.path.join(bus, addr))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--gpuvet", default=os.path.join(REPO, "build", "gpuvet"))
    ap.add_argument("--sizes", default="0,2500,5000,10000,20000")
    ap.add_argument("--runs", type=int, default=3)
    args = ap.parse_args()
    machine.print_header()
    sizes = [int(x) for x in args.sizes.split(",")]
    print("extra PCI devices  median wall (s)  per 1000 devices (ms)")
    base_t = None
    for n in sizes:
        with tempfile.TemporaryDirectory(prefix="gpuvet-pciscale-") as tmp:
            subprocess.run([sys.executable, os.path.join(REPO, "tests", "fixtures", "mkfixture.py"), tmp, "dgx-h100"],
                           check=True, stdout=subprocess.DEVNULL)
            root = os.path.join(tmp, "dgx-h100")
            add_devices(root, n)
            times = []
            for _ in range(args.runs):
                t0 = time.perf_counter()
                r = subprocess.run([args.gpuvet, "check", "--root", root, "--quiet"], stdout=subprocess.DEVNULL,
                                   stderr=subprocess.DEVNULL)
                times.append(time.perf_counter() - t0)
                if r.returncode not in (0, 1):
                    print("check exited %d at %d devices" % (r.returncode, n))
                    return 1
            t = statistics.median(times)
            if base_t is None:
                base_t = t
            per = (t - base_t) / n * 1e6 if n else 0.0
            print("%18d  %15.3f  %21.1f" % (n, t, per))
    return 0


if __name__ == "__main__":
    sys.exit(main())
