#!/usr/bin/env python3
"""`gpuvet bench rdma` over Soft-RoCE, the real libibverbs and the kernel's rdma_rxe, where the
machine allows it: a veth pair between two network namespaces, an rxe device on each end, a
server in one namespace and a client in the other, one size of each test. Skips (77) and
says why without root, iproute2's `rdma`, the rdma_rxe module (a kernel without
CONFIG_RDMA_RXE, as this project's machines: then golden_bench_rdma's fake is what ran) or
rdma-core's rxe provider. Everything it creates is removed at the end.

Usage: test_bench_rdma_rxe.py GPUVET"""
import json
import os
import shutil
import subprocess
import sys
import tempfile

GPUVET = sys.argv[1]
NS = ("gpuvet-rxe-a", "gpuvet-rxe-b")
VETH = ("gvrxe-a", "gvrxe-b")
RXE = ("gvrxe_a", "gvrxe_b")
ADDR = ("10.251.77.1", "10.251.77.2")


def run(*cmd, check=True, timeout=30):
    p = subprocess.run(list(cmd), capture_output=True, text=True, timeout=timeout)
    if check and p.returncode != 0:
        raise RuntimeError("%s: %s" % (" ".join(cmd), (p.stderr or p.stdout).strip()))
    return p


def skip(why):
    print("SKIP:", why)
    sys.exit(77)


def setup():
    for ns in NS:
        run("ip", "netns", "add", ns)
    run("ip", "link", "add", VETH[0], "netns", NS[0], "type", "veth", "peer", "name", VETH[1], "netns", NS[1])
    for i in (0, 1):
        run("ip", "-n", NS[i], "addr", "add", ADDR[i] + "/24", "dev", VETH[i])
        run("ip", "-n", NS[i], "link", "set", VETH[i], "up")
        run("ip", "-n", NS[i], "link", "set", "lo", "up")
        run("ip", "netns", "exec", NS[i], "rdma", "link", "add", RXE[i], "type", "rxe", "netdev", VETH[i])


def teardown():
    for i in (0, 1):
        run("ip", "netns", "exec", NS[i], "rdma", "link", "delete", RXE[i], check=False)
    for ns in NS:
        run("ip", "netns", "delete", ns, check=False)


def main():
    if os.geteuid() != 0:
        skip("needs root (network namespaces, rdma link add)")
    if not shutil.which("rdma") or not shutil.which("ip"):
        skip("needs iproute2's ip and rdma")
    if not os.path.isdir("/sys/module/rdma_rxe") and shutil.which("modprobe"):
        run("modprobe", "rdma_rxe", check=False)
    if not os.path.isdir("/sys/module/rdma_rxe"):
        skip("no rdma_rxe module: this kernel has no Soft-RoCE (CONFIG_RDMA_RXE); golden_bench_rdma ran on the fake")
    try:
        try:
            setup()
        except (RuntimeError, subprocess.TimeoutExpired) as e:
            skip("Soft-RoCE could not be set up: %s" % e)
        env = {k: v for k, v in os.environ.items() if not k.startswith(("FAKE_", "GPUVET_"))}
        args = ["--size", "64K", "-n", "200", "--lat-iters", "100", "--step-timeout", "20"]
        d = tempfile.mkdtemp()
        out = os.path.join(d, "client.json")
        srv = subprocess.Popen(["ip", "netns", "exec", NS[0], GPUVET, "bench", "rdma", "--server", "-d", RXE[0],
                                "--timeout", "60", "-q"] + args, env=env, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True)
        c = subprocess.run(["ip", "netns", "exec", NS[1], GPUVET, "bench", "rdma", "--peer", ADDR[0], "-d", RXE[1],
                            "--json", out] + args, env=env, capture_output=True, text=True, timeout=120)
        so, se = srv.communicate(timeout=60)
        print(c.stdout)
        if "libibverbs.so.1 not found" in c.stderr or "no RDMA device" in c.stderr:
            skip("rdma-core's libibverbs and its rxe provider are needed: %s" % c.stderr.strip())
        rep = json.load(open(out)) if os.path.exists(out) else {}
        ok = (srv.returncode == 0 and rep.get("device", {}).get("link_layer") == "Ethernet"
              and all(r["verified"] for t in ("write_bw", "read_bw", "write_lat") for r in rep.get(t, []))
              and len(rep.get("write_bw", [])) == 1 and len(rep.get("write_lat", [])) == 1)
        # rxe moves bytes in software: its bandwidth is the CPU's, not the port's rate; only
        # the data and the rows are checked here, not the verdict
        if not ok:
            print("FAIL: Soft-RoCE run: client %d %s; server %d %s" % (c.returncode, c.stderr, srv.returncode, se))
            return 1
        print("ok: Soft-RoCE between two namespaces, every size verified")
        return 0
    finally:
        teardown()


if __name__ == "__main__":
    sys.exit(main())
