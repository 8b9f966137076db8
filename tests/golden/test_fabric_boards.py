#!/usr/bin/env python3
"""The fabric services and the kernel module flavour each Blackwell board needs, and host
memory against GPU memory, end to end through the gpuvet binary (docs/checks/gpu.md
gpu.fabric_manager and gpu.driver_version, docs/checks/memory.md memory.host_vs_gpu).

Usage: test_fabric_boards.py GPUVET FAKE_LIB

On the shared fixtures (tests/fixtures/fixture_cache.py), without NVML, as a node whose
NVML does not answer is judged, and for the tray also with the fake NVML (FAKE_LIB) playing
its GPUs joined to the rack's fabric and not yet joined (W6: the per-GPU remedy is the
switch trays' fabric, never "start the Fabric Manager" on the tray):

1. the healthy boards pass: hgx-b200 and hgx-b300-healthy (Fabric Manager and NVLSM on the
   baseboard's NVSwitch management ports, open modules) and gb200-tray (IMEX, open modules,
   Grace C2C);
2. each fault fails, in a copy of the healthy tree with the one fault: NVLSM stopped, the
   Fabric Manager stopped, the proprietary module on Blackwell (B200 and the GB200 tray),
   the open module on Pascal (p100-node), IMEX stopped on the tray (a warning, never "start
   the Fabric Manager"), host RAM well below the GPUs' memory; and a B300 node with a DGX
   B300's 2 TiB (0.89x its HBM) passes;
3. hgx-b300, the issue's reproducer (R580's proprietary module, no fabric daemons), fails
   gpu.driver_version and gpu.fabric_manager.
"""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "fixtures"))
import fixture_cache  # noqa: E402  (the shared fixture trees)

GPUVET, FAKE_LIB = sys.argv[1:3]
SCENARIOS = os.path.join(HERE, "nvml-scenarios")
PCI_IDS = os.path.join(HERE, "..", "fixtures", "pci.ids")
CHECKS = "gpu.fabric_manager,gpu.driver_version,memory.host_vs_gpu,network.port_state"

failures = []


def fail(name, msg):
    failures.append(name)
    print("FAIL %s: %s" % (name, msg))


def ok(name):
    print("ok   %s" % name)


def run(root, scenario=None):
    """The results of `gpuvet check --only CHECKS` on root: without NVML, or with the fake
    NVML playing tests/golden/nvml-scenarios/SCENARIO."""
    env = dict(os.environ, GPUVET_PCI_IDS=PCI_IDS)
    env.pop("GPUVET_NVML_LIB", None)
    nvml = ["--no-nvml"]
    if scenario:
        env["FAKE_NVML_SCENARIO"] = os.path.join(SCENARIOS, scenario)
        nvml = ["--nvml-lib", FAKE_LIB]
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "report.json")
        p = subprocess.run([GPUVET, "check", "--root", root] + nvml + ["--only", CHECKS, "--json", out, "--quiet"],
                           env=env, capture_output=True, text=True, timeout=120)
        if p.returncode not in (0, 1):
            raise RuntimeError("gpuvet exited %d: %s" % (p.returncode, p.stderr))
        with open(out) as f:
            return json.load(f)["checks"]


def results(root, scenario=None):
    """{check id: its host result}."""
    return {c["id"]: c for c in run(root, scenario) if c["subject"] == "host"}


def expect(name, root, check, status, summary=None, remedy=None, no_remedy=None, evidence=None, scenario=None):
    r = results(root, scenario).get(check)
    if r is None:
        fail(name, "no host result for %s" % check)
        return
    problems = []
    if r["status"] != status:
        problems.append("status %s, want %s" % (r["status"], status))
    if summary and not re.search(summary, r["summary"] or ""):
        problems.append("summary %r lacks %r" % (r["summary"], summary))
    if remedy and remedy not in (r["remedy"] or ""):
        problems.append("remedy %r lacks %r" % (r["remedy"], remedy))
    if no_remedy and no_remedy in (r["remedy"] or ""):
        problems.append("remedy %r names %r" % (r["remedy"], no_remedy))
    for key, want in (evidence or {}).items():
        if r["evidence"].get(key) != want:
            problems.append("evidence %s %r, want %r" % (key, r["evidence"].get(key), want))
    if problems:
        fail(name, "%s: %s" % (check, "; ".join(problems)))
    else:
        ok(name)


def edit(path, old, new):
    with open(path) as f:
        text = f.read()
    if old not in text:
        raise RuntimeError("%s lacks %r" % (path, old))
    os.chmod(path, 0o644)
    with open(path, "w") as f:
        f.write(text.replace(old, new))


def set_ram(root, gib):
    """MemTotal as the fixtures write it: the RAM less 3.5 GiB the firmware keeps."""
    path = os.path.join(root, "proc/meminfo")
    with open(path) as f:
        text = f.read()
    os.chmod(path, 0o644)
    with open(path, "w") as f:
        f.write(re.sub(r"(?m)^MemTotal: +\d+ kB$", "MemTotal:       %d kB" % (gib * 1024 * 1024 - 3584 * 1024), text))


def stop(root, pid):
    shutil.rmtree(os.path.join(root, "proc", str(pid)))


def proprietary(root, arch):
    path = os.path.join(root, "proc/driver/nvidia/version")
    with open(path) as f:
        version = re.search(r"  (\d+\.\d+\.\d+)  ", f.read()).group(1)
    os.chmod(path, 0o644)
    with open(path, "w") as f:
        f.write("NVRM version: NVIDIA UNIX %s Kernel Module  %s  Wed Oct  1 19:40:01 UTC 2025\n" % (arch, version))


def variant(scratch, name, fixture):
    return fixture_cache.writable(fixture, os.path.join(scratch, name))


def main():
    shared = {n: fixture_cache.path(n) for n in ("hgx-b200", "hgx-b300-healthy", "gb200-tray", "hgx-b300",
                                                 "p100-node")}

    # 1. healthy boards
    b200, tray = shared["hgx-b200"], shared["gb200-tray"]
    expect("b200 healthy: fabric", b200, "gpu.fabric_manager", "pass",
           r"the Fabric Manager \(pid 3302\) and the NVLink Subnet Manager \(pid 3290\) run",
           evidence={"nvswitch_lpf": "4 management ports (mlx5_10, ...)",
                     "package": "nvidia-fabricmanager-580 580.95.05"})
    # The management ports are no network: the RDMA checks do not judge them.
    expect("b200 healthy: LPFs are not network ports", b200, "network.port_state", "skip")
    expect("b200 healthy: open module", b200, "gpu.driver_version", "pass", r"\(open kernel module\)")
    expect("b200 healthy: host memory", b200, "memory.host_vs_gpu", "pass", r"1\.42x")
    b300ok = shared["hgx-b300-healthy"]
    expect("b300 healthy: fabric", b300ok, "gpu.fabric_manager", "pass",
           r"the Fabric Manager \(pid 3302\) and the NVLink Subnet Manager \(pid 3290\) run")
    expect("b300 healthy: open module", b300ok, "gpu.driver_version", "pass", r"\(open kernel module\)")
    expect("b300 healthy: a DGX B300's RAM", b300ok, "memory.host_vs_gpu", "pass", r"0\.89x")
    expect("tray healthy: IMEX", tray, "gpu.fabric_manager", "pass",
           r"the IMEX daemon runs \(pid 4242\) on this compute tray")
    expect("tray healthy: open module", tray, "gpu.driver_version", "pass", r"\(open kernel module\)")
    expect("tray healthy: C2C host memory", tray, "memory.host_vs_gpu", "skip", r"NVLink-C2C")

    with fixture_cache.scratch(prefix="gpuvet-fabric-") as scratch:
        # 2. one fault each
        root = variant(scratch, "b200-no-nvlsm", "hgx-b200")
        stop(root, 3290)
        expect("b200 without NVLSM", root, "gpu.fabric_manager", "fail",
               r"without the NVLink Subnet Manager \(NVLSM\): CUDA fails with error 802", remedy="nvlsm")

        root = variant(scratch, "b200-no-fm", "hgx-b200")
        stop(root, 3302)
        expect("b200 without the Fabric Manager", root, "gpu.fabric_manager", "fail",
               r"without the Fabric Manager: CUDA fails with error 802", remedy="nvidia-fabricmanager")

        root = variant(scratch, "b200-proprietary", "hgx-b200")
        proprietary(root, "x86_64")
        expect("b200 on the proprietary module", root, "gpu.driver_version", "fail",
               r"^Blackwell GPUs \(NVIDIA B200\) run only on the open kernel modules",
               remedy="Install the open kernel modules (nvidia-open)")

        root = variant(scratch, "b200-small-ram", "hgx-b200")
        set_ram(root, 256)
        expect("b200 with RAM well below its GPUs", root, "memory.host_vs_gpu", "warn", r"0\.18x",
               no_remedy="twice")

        # Below 1x is how NVIDIA builds a DGX B300 (2 TB for 2.3 TB of HBM): no warning.
        root = variant(scratch, "b300-2tib", "hgx-b300")
        set_ram(root, 2048)
        expect("b300 with 2 TiB (a DGX B300's RAM)", root, "memory.host_vs_gpu", "pass", r"0\.89x")

        root = variant(scratch, "tray-no-imex", "gb200-tray")
        stop(root, 4242)
        expect("tray without IMEX", root, "gpu.fabric_manager", "warn",
               r"no IMEX daemon on this multi-node NVLink compute tray", remedy="nvidia-imex",
               no_remedy="Start the Fabric Manager")

        root = variant(scratch, "tray-proprietary", "gb200-tray")
        proprietary(root, "aarch64")
        expect("tray on the proprietary module", root, "gpu.driver_version", "fail",
               r"run only on the open kernel modules", remedy="nvidia-open")

        root = variant(scratch, "p100-open", "p100-node")
        edit(os.path.join(root, "proc/driver/nvidia/version"), "NVIDIA UNIX x86_64 Kernel Module  590.48.01",
             "NVIDIA UNIX Open Kernel Module for x86_64  580.95.05")
        expect("pascal on the open module", root, "gpu.driver_version", "fail",
               r"^Pascal GPUs \(Tesla P100-SXM2-16GB\) run only on the proprietary kernel modules",
               remedy="proprietary kernel modules of an R580 or older branch")

    # With NVML: a tray whose GPUs joined the rack's fabric, then one whose GPUs have not
    # (no cluster UUID yet): each GPU's failure points at the switch trays' fabric.
    expect("tray with NVML: joined", tray, "gpu.fabric_manager", "pass",
           r"the IMEX daemon runs \(pid 4242\) for this tray's 4 GPUs in the NVLink cluster",
           scenario="golden-gb200-tray.scn")
    gpus = [c for c in run(tray, "golden-gb200-tray-unjoined.scn")
            if c["id"] == "gpu.fabric_manager" and c["subject"] != "host"]
    bad = [c for c in gpus if c["status"] != "fail" or "switch trays" not in (c["remedy"] or "") or
           "Start the Fabric Manager" in (c["remedy"] or "")]
    if len(gpus) != 4 or bad:
        fail("tray with NVML: not joined", "want 4 GPU failures pointing at the switch trays, got %r" %
             [(c["subject"], c["status"], c["remedy"]) for c in gpus])
    else:
        ok("tray with NVML: not joined")

    # 3. the reproducer
    b300 = shared["hgx-b300"]
    expect("b300 reproducer: proprietary module", b300, "gpu.driver_version", "fail",
           r"^Blackwell Ultra GPUs \(NVIDIA B300 SXM6 AC\) run only on the open kernel modules")
    expect("b300 reproducer: no fabric daemons", b300, "gpu.fabric_manager", "fail",
           r"without the Fabric Manager and the NVLink Subnet Manager")

    print("%d failure(s)" % len(failures) if failures else "all fabric-board cases pass")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
