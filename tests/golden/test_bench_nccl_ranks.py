#!/usr/bin/env python3
"""`gpuvet bench nccl` as a multi-process job on this machine: several gpuvet processes, one
rank each (GPUVET_RANK / GPUVET_WORLD_SIZE, as srun or mpirun would set their own), meet
through the rendezvous (tcp and file), share NCCL's id, and run the sweep through the fake
libnccl across processes; rank 0 reports for the job. Also: a rank that never comes (a
timeout naming it, never a hang), wrong results on one rank only, a hang on one rank, and
the network's expectation across "nodes" from the node's RDMA ports. Fakes' figures, not a
GPU's.

Usage: test_bench_nccl_ranks.py GPUVET FAKE_LIBCUDA FAKE_LIBNCCL"""
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "fixtures"))
import fixture_cache  # noqa: E402
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "fakes"))
import fakeenv  # noqa: E402  (wall-clock bounds scale with a busy or sanitized run)

SCALE = fakeenv.time_scale()

GPUVET, FAKE_CUDA, FAKE_NCCL = sys.argv[1:4]
failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def job(size, args, rendezvous, env=None, per_rank_env=None, ranks=None, local_size=1, timeout=120):
    """Start `size` ranks (or only those in `ranks`), wait for all; [(proc, report of rank 0)]."""
    base = {k: v for k, v in os.environ.items()
            if not k.startswith(("FAKE_", "NCCL_", "SLURM_", "OMPI_", "PMI_", "PMIX_", "GPUVET_", "MASTER_"))}
    base.update({"GPUVET_CUDA_LIB": FAKE_CUDA, "GPUVET_NCCL_LIB": FAKE_NCCL, "FAKE_CUDA_DEVICES": "1",
                 "FAKE_NCCL_LAT_US": "0", "GPUVET_WORLD_SIZE": str(size), "GPUVET_LOCAL_SIZE": str(local_size)})
    base.update(env or {})
    d = tempfile.mkdtemp()
    procs = []
    t0 = time.monotonic()
    for r in (ranks if ranks is not None else range(size)):
        e = dict(base, GPUVET_RANK=str(r), GPUVET_LOCAL_RANK=str(r % local_size))
        e.update((per_rank_env or {}).get(r, {}))
        out = os.path.join(d, "rank%d.json" % r)
        procs.append((r, out, subprocess.Popen([GPUVET, "bench", "nccl", "--rendezvous", rendezvous, "--json", out,
                                                 "-q"] + list(args), env=e, stdout=subprocess.PIPE,
                                                stderr=subprocess.PIPE, text=True)))
    results = []
    for r, out, p in procs:
        try:
            so, se = p.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            p.kill()
            so, se = p.communicate()
        rep = json.load(open(out)) if os.path.exists(out) else None
        results.append({"rank": r, "code": p.returncode, "stderr": se, "report": rep})
    shutil.rmtree(d)
    if os.environ.get("TEST_VERBOSE"):
        print("job of %d ranks: %.1f s" % (size, time.monotonic() - t0))
    return results, time.monotonic() - t0


def main():
    sweep = ["-C", "all", "-b", "1K", "-e", "64K", "-f", "8", "-n", "2", "-w", "1"]
    # --- three ranks over tcp: every collective across processes, verified
    res, _ = job(3, sweep, "tcp://127.0.0.1:%d" % free_port(), {"FAKE_NCCL_BUSBW_GBPS": "77"})
    check(all(x["code"] == 0 for x in res), "3 ranks over tcp exit 0: %s" % [(x["code"], x["stderr"][-300:])
                                                                          for x in res])
    rep = res[0]["report"]
    check(rep is not None and all(x["report"] is None for x in res[1:]), "rank 0 alone writes the report")
    rows = (rep or {}).get("sweep", [])
    check(rows and all(r["verified"] and r["wrong"] == 0 for r in rows), "every row verified across processes")
    check(rep and rep["job"]["ranks"] == 3 and rep["job"]["processes"] == 3 and rep["job"]["launcher"] == "gpuvet",
          "the job: 3 ranks in 3 processes: %s" % (rep or {}).get("job"))
    check(rep and [x["state"] for x in rep["job"]["outcomes"]] == ["ok"] * 3, "every rank's outcome gathered: ok")
    big = [r for r in rows if r["size_bytes"] == 65536 and r["collective"] in ("all_reduce", "broadcast")]
    check(big and all(abs(r["busbw_gbps"] - 77) < 0.5 for r in big),
          "busbw combined over processes reads 77 back: %s" % [(r["collective"], r["busbw_gbps"]) for r in big])

    # --- two ranks through a shared file
    with tempfile.TemporaryDirectory() as d:
        res, _ = job(2, ["-C", "all_reduce", "-e", "64K", "-n", "2"], "file:" + os.path.join(d, "rdv"))
        check(all(x["code"] == 0 for x in res) and res[0]["report"], "2 ranks through a file exit 0: %s" %
              [x["stderr"][-300:] for x in res])
        check(not os.listdir(d), "the rendezvous file is removed: %s" % os.listdir(d))

    # --- a rank that never comes: a timeout naming it, within the join deadline
    res, secs = job(3, ["-C", "all_reduce", "-e", "64K", "--join-timeout", str(round(3 * SCALE))], "tcp://127.0.0.1:%d" % free_port(),
                    ranks=[0, 1])
    check(all(x["code"] == 1 for x in res) and secs < 30 * SCALE, "ranks whose peer never comes exit 1 in time: %s %.1f s" %
          ([x["code"] for x in res], secs))
    m = {v["name"]: v for v in (res[0]["report"] or {}).get("measurements", [])}
    check("rank 2" in m.get("all_reduce", {}).get("summary", ""), "rank 0 names the missing rank: %s" %
          m.get("all_reduce", {}).get("summary"))

    # --- a rank that fails before its first collective: rank 0's report carries its error
    res, _ = job(2, ["-C", "all_reduce", "-e", "64K", "-n", "2", "--hang-timeout", str(round(5 * SCALE))], "tcp://127.0.0.1:%d" % free_port(),
                 per_rank_env={1: {"FAKE_CUDA_FAIL": "cuMemAlloc_v2:CUDA_ERROR_OUT_OF_MEMORY"}})
    outcomes = {x["rank"]: x for x in ((res[0]["report"] or {}).get("job", {}).get("outcomes") or [])}
    check(all(x["code"] == 1 for x in res) and outcomes.get(1, {}).get("state") == "failed" and
          "CUDA_ERROR_OUT_OF_MEMORY" in (outcomes.get(1, {}).get("error") or ""),
          "rank 1's own error reaches rank 0's report: %s" % outcomes)

    # --- wrong results on one rank only: the job fails
    res, _ = job(2, ["-C", "all_reduce", "-e", "64K", "-n", "2"], "tcp://127.0.0.1:%d" % free_port(),
                 per_rank_env={1: {"FAKE_NCCL_WRONG": "1"}})
    m = {v["name"]: v for v in (res[0]["report"] or {}).get("measurements", [])}
    check(res[0]["code"] == 1 and m.get("all_reduce", {}).get("status") == "fail",
          "rank 1's wrong results fail the job's report: %s" % m.get("all_reduce"))

    # --- a collective that hangs on one rank: every rank stops at its hang deadline
    res, secs = job(2, ["-C", "all_reduce", "-e", "64K", "-n", "2", "--hang-timeout", str(round(3 * SCALE))],
                    "tcp://127.0.0.1:%d" % free_port(), per_rank_env={1: {"FAKE_NCCL_HANG": "ncclAllReduce"}})
    f = (res[0]["report"] or {}).get("failure") or {}
    check(all(x["code"] == 1 for x in res) and secs < 40 * SCALE and f.get("hung"),
          "a hang on rank 1 stops the job in time: %s %.1f s %s" % ([x["code"] for x in res], secs, f.get("error")))

    # --- across "nodes": one rank per node, judged against the node's RDMA ports (8 x 200 Gb/s)
    with fixture_cache.scratch() as scratch:
        tree = fixture_cache.writable("dgx-h100", os.path.join(scratch, "dgx-h100"), overlay=False)
        addrs = sorted(os.listdir(os.path.join(tree, "proc/driver/nvidia/gpus")))
        for i in range(8):
            dev = os.path.join(tree, "sys/devices/pci0000:%02x/0000:%02x:00.0" % (0xa0 + i, 0xa0 + i))
            hca = os.path.join(tree, "sys/class/infiniband/mlx5_%d" % i)
            os.makedirs(dev, exist_ok=True)
            os.makedirs(os.path.join(hca, "ports/1"))
            os.symlink(os.path.relpath(dev, hca), os.path.join(hca, "device"))
            open(os.path.join(hca, "ports/1/state"), "w").write("4: ACTIVE\n")
            open(os.path.join(hca, "ports/1/rate"), "w").write("200 Gb/sec (4X HDR)\n")
        res, _ = job(2, ["-r", tree, "-C", "all_reduce", "-b", "64K", "-e", "1M", "-n", "2"],
                     "tcp://127.0.0.1:%d" % free_port(), {"FAKE_NCCL_BUSBW_GBPS": "180", "FAKE_CUDA_PCI_BUS_IDS":
                                                           addrs[0]})
        rep = res[0]["report"] or {}
        m = {v["name"]: v for v in rep.get("measurements", [])}.get("all_reduce", {})
        check(rep.get("job", {}).get("nodes") == 2 and rep.get("fabric", {}).get("path") == "network" and
              m.get("peak") == 200 and m.get("status") == "pass",
              "2 nodes: the network's 200 GB/s expected, 180 passes: %s %s %s" % (rep.get("fabric"), m.get("peak"),
                                                                                m.get("status")))

    if failures:
        print("%d failure(s)" % len(failures))
        return 1
    print("ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
