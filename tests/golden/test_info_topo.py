#!/usr/bin/env python3
"""Golden tests of `gpuvet info` and `gpuvet topo` on the fixture machines.

    test_info_topo.py GPUVET SOURCE_ROOT FAKE_NVML_LIB

Makes writable trees of dgx-h100, vfio-host and a100-nouveau (tests/fixtures/fixture_cache.py)
in a temporary directory and adds to dgx-h100 what its generator does not write: the RDMA
devices and interfaces of its eight ConnectX-7 (/sys/class/infiniband/mlx5_N,
/sys/class/net/ibpBs0, linked as the kernel links them). Then:

  * the topo matrices are checked cell by cell against matrices written here by hand from
    the fixtures' descriptions (tests/fixtures/README.md), with and without the fake NVML
    (scenarios tests/golden/nvml-scenarios/golden-dgx-h100: NV18 for every GPU pair; golden-dgx-h100-nvlink-down: NV17
    for the pairs with GPU 3);
  * every output is diffed against tests/golden/expected/info-topo/<case>.{txt,json}
    (GPUVET_UPDATE_GOLDEN=1 rewrites them);
  * the NVML rule: under --root no library is loaded unless one is named, and --no-nvml
    wins over $GPUVET_NVML_LIB.

Exit 0 when everything matches, 1 otherwise."""

import difflib
import json
import os
import re
import subprocess
import sys
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "fixtures"))
import fixture_cache  # noqa: E402  (the shared fixture trees)

HERE = os.path.dirname(os.path.abspath(__file__))
EXPECTED = os.path.join(HERE, "expected", "info-topo")

GPU = "GPU"
failures = []


def fail(msg):
    failures.append(msg)
    print("FAIL " + msg)


def run(gpuvet, args, env):
    proc = subprocess.run([gpuvet] + args, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          universal_newlines=True, env=env, timeout=120)
    return proc.returncode, proc.stdout, proc.stderr


def add_rdma(root):
    """mlx5_N and ibp<bus>s0 for every ConnectX (15b3) of the fixture, in PCI order."""
    devices = os.path.join(root, "sys", "bus", "pci", "devices")
    n = 0
    for addr in sorted(os.listdir(devices)):
        path = os.path.realpath(os.path.join(devices, addr))
        with open(os.path.join(path, "vendor")) as f:
            if f.read().strip() != "0x15b3":
                continue
        rel_dev = os.path.relpath(path, os.path.join(root, "sys"))  # devices/pci0000:16/...
        bus = int(addr.split(":")[1], 16)
        for cls, name in (("infiniband", "mlx5_%d" % n), ("net", "ibp%ds0" % bus)):
            d = os.path.join(path, cls, name)
            os.makedirs(d)
            os.symlink("../../../" + addr, os.path.join(d, "device"))
            os.makedirs(os.path.join(root, "sys", "class", cls), exist_ok=True)
            os.symlink("../../" + rel_dev + "/" + cls + "/" + name, os.path.join(root, "sys", "class", cls, name))
        n += 1
    return n


def parse_matrix(text):
    """{(row, col): cell} and the GPU rows' affinity columns from `topo` text."""
    lines = text.split("\n")
    header = lines[0].split("\t")
    assert header[0] == "", "header must start with a tab: %r" % lines[0]
    cols = [c for c in header[1:] if re.match(r"(GPU|NIC)[0-9]+$", c)]
    cells, affinity = {}, {}
    for line in lines[1:]:
        if not line:
            break
        parts = line.split("\t")
        row = parts[0]
        for c, v in zip(cols, parts[1:1 + len(cols)]):
            cells[(row, c)] = v
        if row.startswith(GPU):
            affinity[row] = parts[1 + len(cols):]
    return cols, cells, affinity


# ---- hand-written expectations ------------------------------------------------------------

def dgx_expected(nvlinks):
    """DGX H100: GPU i and NIC i share the first switch level (PXB: the GPU is two switch
    levels below it); GPUs/NICs 0-3 on node 0, 4-7 on node 1, each pair on its own root
    complex (NODE within a socket, SYS across). NVSwitch: NV<links> for every GPU pair."""
    want = {}
    names = ["GPU%d" % i for i in range(8)] + ["NIC%d" % i for i in range(8)]
    for a in names:
        for b in names:
            ia, ib = int(a[3:]), int(b[3:])
            if a == b:
                v = " X "
            elif a[:3] == "GPU" and b[:3] == "GPU" and nvlinks:
                v = "NV%d" % nvlinks(ia, ib)
            elif a[:3] != b[:3] and ia == ib:
                v = "PXB"
            elif (ia < 4) == (ib < 4):
                v = "NODE"
            else:
                v = "SYS"
            want[(a, b)] = v
    return names, want


def table(names, rows):
    return {(a, b): rows[i][j] for i, a in enumerate(names) for j, b in enumerate(names)}


# vfio-host: GPU0 (17) and GPU1 (31) on node 0 root ports, GPU2 (98) and GPU3 (b3) on node 1;
# GPU3 and the X710 (b4) on downstream ports of one PLX switch: PIX. The two ConnectX NICs
# (ca, cb) on two root ports of one node 1 host bridge: PHB between them, NODE to the rest of
# node 1.
VFIO_NAMES = ["GPU0", "GPU1", "GPU2", "GPU3", "NIC0", "NIC1", "NIC2"]
VFIO = table(VFIO_NAMES, [
    [" X ", "NODE", "SYS", "SYS", "SYS", "SYS", "SYS"],
    ["NODE", " X ", "SYS", "SYS", "SYS", "SYS", "SYS"],
    ["SYS", "SYS", " X ", "NODE", "NODE", "NODE", "NODE"],
    ["SYS", "SYS", "NODE", " X ", "PIX", "NODE", "NODE"],
    ["SYS", "SYS", "NODE", "PIX", " X ", "NODE", "NODE"],
    ["SYS", "SYS", "NODE", "NODE", "NODE", " X ", "PHB"],
    ["SYS", "SYS", "NODE", "NODE", "NODE", "PHB", " X "],
])
# a100-nouveau: the A100 (40:01.1) and the igb NIC (40:05.1) on two root ports of one root
# complex: PHB.
A100_NAMES = ["GPU0", "NIC0"]
A100 = table(A100_NAMES, [[" X ", "PHB"], ["PHB", " X "]])


def check_matrix(case, text, names, want, affinity=None):
    cols, cells, aff = parse_matrix(text)
    if cols != names:
        fail("%s: columns %s, want %s" % (case, cols, names))
        return
    for key, v in want.items():
        if cells.get(key) != v:
            fail("%s: %s/%s is %r, want %r" % (case, key[0], key[1], cells.get(key), v))
    for row, cols_want in (affinity or {}).items():
        if aff.get(row) != cols_want:
            fail("%s: %s affinity columns %r, want %r" % (case, row, aff.get(row), cols_want))


# ---- expected files ---------------------------------------------------------------------

def compare(case, got, update):
    path = os.path.join(EXPECTED, case)
    if update:
        os.makedirs(EXPECTED, exist_ok=True)
        with open(path, "w") as f:
            f.write(got)
        print("updated %s" % os.path.relpath(path))
        return
    try:
        with open(path) as f:
            want = f.read()
    except OSError as e:
        fail("%s: %s (run with GPUVET_UPDATE_GOLDEN=1 to create it)" % (case, e))
        return
    if got != want:
        diff = difflib.unified_diff(want.splitlines(True), got.splitlines(True), "expected/" + case, "got")
        fail("%s differs:\n%s" % (case, "".join(diff)))


def main():
    gpuvet, source, fake = sys.argv[1], sys.argv[2], os.path.abspath(sys.argv[3])
    update = os.environ.get("GPUVET_UPDATE_GOLDEN") == "1"
    # golden-* scenarios live beside the golden tests: the fake's own tests load every
    # file in tests/fakes/scenarios.
    scenarios = os.path.join(source, "tests", "golden", "nvml-scenarios")
    base = {k: v for k, v in os.environ.items()
            if k not in ("GPUVET_NVML_LIB", "GPUVET_FSROOT", "GPUVET_DATA_DIR", "FAKE_NVML_SCENARIO", "NO_COLOR")}
    base["GPUVET_PCI_IDS"] = os.path.join(source, "tests", "fixtures", "pci.ids")

    def nvml_env(scenario):
        return dict(base, GPUVET_NVML_LIB=fake, FAKE_NVML_SCENARIO=os.path.join(scenarios, scenario + ".scn"))

    def scrub(text):
        for path in (os.path.realpath(fake), fake):
            text = text.replace(path, "<fake libnvidia-ml.so.1>")
        return text.replace(tmp, "<fixtures>")

    with fixture_cache.scratch(prefix="gpuvet-info-topo-") as tmp:
        for name in ("dgx-h100", "vfio-host", "a100-nouveau"):
            fixture_cache.writable(name, os.path.join(tmp, name))  # dgx-h100 gets RDMA devices below
        dgx = os.path.join(tmp, "dgx-h100")
        if add_rdma(dgx) != 8:
            fail("dgx-h100: expected 8 ConnectX-7 in the fixture")

        # topo, sysfs only
        gpu_aff = {"GPU%d" % i: ["0-55,112-167" if i < 4 else "56-111,168-223", "0" if i < 4 else "1", "", "N/A"]
                   for i in range(8)}
        for name, names, want, aff in (("dgx-h100", *dgx_expected(None), gpu_aff),
                                       ("vfio-host", VFIO_NAMES, VFIO, None),
                                       ("a100-nouveau", A100_NAMES, A100,
                                        {"GPU0": ["0-127", "0", "", "N/A"]})):
            rc, out, err = run(gpuvet, ["topo", "--root", os.path.join(tmp, name)], base)
            if rc != 0:
                fail("topo %s: exit %d: %s" % (name, rc, err))
                continue
            check_matrix("topo " + name, out, names, want, aff)
            compare("topo-%s.txt" % name, out, update)
            if names.count("GPU0") and len([n for n in names if n.startswith(GPU)]) >= 2 and \
                    "NVML not used: --root" not in err:
                fail("topo %s: stderr does not say why NVLinks are missing: %r" % (name, err))

        # the NIC legend names the RDMA devices
        rc, out, _ = run(gpuvet, ["topo", "--root", dgx], base)
        for i in range(8):
            if "  NIC%d: mlx5_%d\n" % (i, i) not in out:
                fail("topo dgx-h100: NIC legend lacks NIC%d: mlx5_%d" % (i, i))

        # topo with the fake NVML: NV18 everywhere, NV17 with GPU 3's link down
        rc, out, err = run(gpuvet, ["topo", "--root", dgx], nvml_env("golden-dgx-h100"))
        if rc != 0 or err:
            fail("topo dgx-h100 + NVML: exit %d, stderr %r" % (rc, err))
        check_matrix("topo dgx-h100 + NVML", out, *dgx_expected(lambda a, b: 18))
        compare("topo-dgx-h100-nvml.txt", out, update)
        rc, out, err = run(gpuvet, ["topo", "--root", dgx], nvml_env("golden-dgx-h100-nvlink-down"))
        check_matrix("topo dgx-h100 + NVML, link down", out,
                     *dgx_expected(lambda a, b: 17 if 3 in (a, b) else 18))
        compare("topo-dgx-h100-nvlink-down.txt", out, update)

        rc, out, err = run(gpuvet, ["topo", "--json", "--root", dgx], nvml_env("golden-dgx-h100"))
        try:
            doc = json.loads(out)
            if doc.get("schema") != "gpuvet.topo/1":
                fail("topo --json: schema %r" % doc.get("schema"))
            if doc["matrix"][0][1] != "NV18" or doc["pcie"][0][1] != "NODE" or doc["nvlinks"][0][1] != 18:
                fail("topo --json: GPU0/GPU1 is %r %r %r" % (doc["matrix"][0][1], doc["pcie"][0][1],
                                                             doc["nvlinks"][0][1]))
            if doc["devices"][8]["rdma_device"] != "mlx5_0" or doc["devices"][8]["netdev"] != "ibp28s0":
                fail("topo --json: NIC0 is %r" % doc["devices"][8])
            compare("topo-dgx-h100-nvml.json", scrub(out), update)
        except (ValueError, KeyError, IndexError) as e:
            fail("topo --json: %s: %r" % (e, out[:300]))

        # the NVML rule
        rc, out, err = run(gpuvet, ["topo", "--json", "--root", dgx], base)
        if json.loads(out)["nvml"]["status"] != "not tried":
            fail("topo --root without a named library loaded NVML")
        rc, out, err = run(gpuvet, ["topo", "--json", "--no-nvml", "--root", dgx], nvml_env("golden-dgx-h100"))
        doc = json.loads(out)
        if doc["nvml"]["status"] != "not tried" or doc["matrix"][0][1] != "NODE":
            fail("topo --no-nvml still used NVML: %r" % doc["nvml"])
        env = nvml_env("golden-dgx-h100")
        del env["GPUVET_NVML_LIB"]
        rc, out, err = run(gpuvet, ["topo", "--root", dgx, "--nvml-lib", fake], env)
        if "\tNV18\t" not in out:
            fail("topo --nvml-lib: no NV18 in %r" % out[:300])

        # info
        for name in ("dgx-h100", "vfio-host", "a100-nouveau"):
            rc, out, err = run(gpuvet, ["info", "--root", os.path.join(tmp, name)], base)
            if rc != 0 or err:
                fail("info %s: exit %d, stderr %r" % (name, rc, err))
            compare("info-%s.txt" % name, scrub(out), update)
        rc, out, err = run(gpuvet, ["info", "--root", dgx], nvml_env("golden-dgx-h100"))
        if rc != 0 or err:
            fail("info dgx-h100 + NVML: exit %d, stderr %r" % (rc, err))
        for needle in ("UUID                          : GPU-6f1c2b00-5a3e-4d1b-9c4e-2f0a00000000",
                       "Driver Version (NVML)         : 550.54.15", "NVLinks                       : 18 (18 active)"):
            if needle not in out:
                fail("info dgx-h100 + NVML lacks %r" % needle)
        compare("info-dgx-h100-nvml.txt", scrub(out), update)
        rc, out, err = run(gpuvet, ["info", "--json", "--root", dgx], nvml_env("golden-dgx-h100"))
        try:
            doc = json.loads(out)
            g0 = doc["gpus"][0]
            if doc.get("schema") != "gpuvet.info/1" or g0["pci_bus_id"] != "0000:1b:00.0" or \
                    g0["nvml"]["metrics"]["uuid"] != "GPU-6f1c2b00-5a3e-4d1b-9c4e-2f0a00000000" or \
                    g0["nvml"]["metrics"]["power_limit_watts"] != 700 or doc["nvml_only_gpus"]:
                fail("info --json: unexpected %r" % g0)
            compare("info-dgx-h100-nvml.json", scrub(out), update)
        except (ValueError, KeyError, IndexError, TypeError) as e:
            fail("info --json: %s: %r" % (e, out[:300]))
        rc, out, err = run(gpuvet, ["info", "--json", "--root", dgx], base)
        doc = json.loads(out)
        if doc["gpus"][0]["nvml"] is not None or doc["driver"]["nvml_driver_version"] is not None or \
                "not this machine" not in (doc["nvml"]["reason"] or ""):
            fail("info --json without NVML: %r" % doc["nvml"])
        compare("info-dgx-h100.json", scrub(out), update)

        # bad usage
        rc, out, err = run(gpuvet, ["topo", "--bogus"], base)
        if rc != 2 or "unknown option" not in err:
            fail("topo --bogus: exit %d %r" % (rc, err))
        rc, out, err = run(gpuvet, ["info", "--nvml-lib"], base)
        if rc != 2:
            fail("info --nvml-lib without a value: exit %d" % rc)

    if failures:
        print("%d failure(s)" % len(failures))
        return 1
    print("ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
