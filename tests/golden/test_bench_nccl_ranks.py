#!/usr/bin/env python3
"""`gpuvet bench nccl` as a multi-process job on this machine: several gpuvet processes, one
rank each (GPUVET_RANK / GPUVET_WORLD_SIZE, as srun or mpirun would set their own), meet
through the rendezvous (tcp and file), share NCCL's id, and run the sweep through the fake
libnccl across processes; rank 0 reports for the job. Also: a rank that never comes (a
timeout naming it, never a hang), wrong results on one rank only, a hang on one rank, and
the network's expectation across "nodes" from the node's RDMA ports. Fakes' figures, not a
GPU's. And the rendezvous under attack (issue 38, N14): rank 0 of tcp://127.0.0.1:P listens
on 127.0.0.1 only (/proc/net/tcp); a process that sends rank 0 a HELLO "rank 1 of 2" or
"rank 5 of 2" before the real rank 1 (the review's reproducer, and the same in the current
framing, without and with the job's secret) is refused and logged, and the job completes
with the real rank 1.

Usage: test_bench_nccl_ranks.py GPUVET FAKE_LIBCUDA FAKE_LIBNCCL"""
import hashlib
import hmac
import json
import os
import shutil
import struct
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


free_port = fakeenv.free_port


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


MAGIC = 0x56525647
HELLO, BLOB, REFUSE, CHALLENGE = 1, 2, 3, 6


def fnv1a(data):
    h = 2166136261
    for b in data:
        h = ((h ^ b) * 16777619) & 0xffffffff
    return h


def frame_v1(mtype, rank, size, key=b""):
    """The review's reproducer: a version 1 message (no challenge, no mac)."""
    payload = struct.pack("<IIQBB", rank, size, 0, 0, len(key)) + key
    return struct.pack("<IHHII", MAGIC, 1, mtype, len(payload), fnv1a(payload)) + payload


def frame_v2(mtype, rank, size, key=b"", challenge=b"\0" * 16, mac=b"\0" * 32):
    payload = struct.pack("<IIQBB", rank, size, 0, 0, len(key)) + challenge + mac + key
    return struct.pack("<IHHII", MAGIC, 2, mtype, len(payload), fnv1a(payload)) + payload


def mac_v2(secret, mtype, rank, size, key, root_challenge, rank_challenge):
    """src/bench/rendezvous_msg.c's rdv_msg_mac, written again from its layout."""
    text = (b"gpuvet rendezvous v2\0" + root_challenge + rank_challenge +
            struct.pack("<HIIQBB", mtype, rank, size, 0, 0, len(key)) + key)
    return hmac.new(secret, text, hashlib.sha256).digest()


def read_msg(sock):
    """(type, payload) of one message, or None when the connection ends first."""
    buf = b""
    while len(buf) < 16 or len(buf) < 16 + struct.unpack("<I", buf[8:12])[0]:
        chunk = sock.recv(65536)
        if not chunk:
            return None
        buf += chunk
    return struct.unpack("<H", buf[6:8])[0], buf[16:16 + struct.unpack("<I", buf[8:12])[0]]


def connect(port):
    deadline = time.monotonic() + 30 * SCALE
    while True:
        try:
            return socket.create_connection(("127.0.0.1", port), timeout=30 * SCALE)
        except OSError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.05)


def forge(port, version, rank, size, secret=b""):
    """A process that is no rank says it is `rank` of `size`; rank 0's answer's type, or None."""
    with connect(port) as s:
        if version == 1:
            s.sendall(frame_v1(HELLO, rank, size))
            answer = read_msg(s)
            return answer and answer[0]
        challenge = read_msg(s)
        if not challenge or challenge[0] != CHALLENGE:
            return None
        root_challenge, mine = challenge[1][18:34], b"\x42" * 16
        s.sendall(frame_v2(HELLO, rank, size, challenge=mine,
                           mac=mac_v2(secret, HELLO, rank, size, b"", root_challenge, mine)))
        answer = read_msg(s)
        while answer and answer[0] == CHALLENGE:
            answer = read_msg(s)
        return answer and answer[0]


def listening(port):
    """The local addresses of the sockets listening on port, from /proc/net/tcp and tcp6."""
    out = []
    for name in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            lines = open(name).read().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            local, state = line.split()[1], line.split()[3]
            addr, p = local.split(":")
            if state == "0A" and int(p, 16) == port:
                out.append(addr)
    return out


def attacked_job(attacks, env=None, secret=None):
    """Rank 0 of 2 on tcp://127.0.0.1:P; once it listens, the attacks (forge's arguments) and
    then the real rank 1. (rank 0's code, its stderr, the attacks' answers, rank 1's code,
    the addresses rank 0 listened on)."""
    port = free_port()
    base = {k: v for k, v in os.environ.items()
            if not k.startswith(("FAKE_", "NCCL_", "SLURM_", "OMPI_", "PMI_", "PMIX_", "GPUVET_", "MASTER_"))}
    base.update({"GPUVET_CUDA_LIB": FAKE_CUDA, "GPUVET_NCCL_LIB": FAKE_NCCL, "FAKE_CUDA_DEVICES": "1",
                 "FAKE_NCCL_LAT_US": "0", "GPUVET_WORLD_SIZE": "2"})
    if secret:
        base["GPUVET_RENDEZVOUS_SECRET"] = secret
    base.update(env or {})
    argv = [GPUVET, "bench", "nccl", "--rendezvous", "tcp://127.0.0.1:%d" % port, "-q", "-C", "all_reduce", "-b", "1K",
            "-e", "4K", "-n", "2", "--join-timeout", str(round(30 * SCALE))]
    with tempfile.TemporaryDirectory() as d:
        out = os.path.join(d, "rank0.json")
        root = subprocess.Popen(argv + ["--json", out], env=dict(base, GPUVET_RANK="0"), stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True)
        answers, bound, peer = [], [], None
        try:
            deadline = time.monotonic() + 30 * SCALE
            while not listening(port) and time.monotonic() < deadline and root.poll() is None:
                time.sleep(0.05)
            bound = listening(port)
            answers = [forge(port, *a) for a in attacks]
            peer = subprocess.run(argv, env=dict(base, GPUVET_RANK="1"), capture_output=True, text=True,
                                  timeout=120 * SCALE)
            _, err = root.communicate(timeout=120 * SCALE)
        except (subprocess.TimeoutExpired, OSError) as e:
            root.kill()
            _, err = root.communicate()
            err += " (%s)" % e
        rep = json.load(open(out)) if os.path.exists(out) else None
    return root.returncode, err, answers, peer, bound, rep


def attack_cases():
    # rank 0 of tcp://127.0.0.1:P listens on 127.0.0.1 only, not on every address
    code, err, answers, peer, bound, rep = attacked_job([])
    check(bound and all(a == "0100007F" for a in bound), "tcp://127.0.0.1:P: rank 0 listens on 127.0.0.1 only: %s"
          % bound)
    check(code == 0 and peer and peer.returncode == 0, "the job completes: %s %s" % (code, err[-300:]))

    # the review's reproducer, then "rank 5 of 2" in the framing of the day (no secret: its
    # proof is the HMAC under an empty key, which anyone can make): refused, not fatal
    code, err, answers, peer, bound, rep = attacked_job([(1, 1, 2), (1, 5, 2), (2, 5, 2)])
    check(code == 0 and peer and peer.returncode == 0 and rep and
          [x["state"] for x in rep["job"]["outcomes"]] == ["ok", "ok"],
          "forged hellos (v1 rank 1 of 2, rank 5 of 2) do not take rank 1's place or end the job: rank 0 %s, "
          "rank 1 %s: %s %s" % (code, peer and peer.returncode, err[-400:], peer and peer.stderr[-300:]))
    check(answers[0] != BLOB and answers[2] == REFUSE, "no blob for the forgers, rank 5 refused: %s" % answers)
    check("refused 127.0.0.1:" in err and "a process says it is rank 5 of 2" in err and "not gpuvet's rendezvous" in err,
          "rank 0 logs what it refused: %s" % err[-600:])

    # with the job's secret: a forger without it is refused, and the real rank 1 joins
    secret = "3f9a1c0e7b2d48a6915e0c7d2b4f6a81"
    code, err, answers, peer, bound, rep = attacked_job(
        [(2, 1, 2, b"not the secret, guessed"), (2, 1, 2, b"")], secret=secret)
    check(code == 0 and peer and peer.returncode == 0 and answers == [REFUSE, REFUSE],
          "with GPUVET_RENDEZVOUS_SECRET, forgers are refused and the job completes: %s %s %s" % (
              code, answers, err[-400:]))
    check("did not prove the job's rendezvous secret" in err, "rank 0 logs the failed proof: %s" % err[-400:])
    check(secret not in err and secret not in (peer.stderr if peer else ""), "the secret is never printed")


def main():
    attack_cases()
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
        tree = fixture_cache.writable("dgx-h100", os.path.join(scratch, "dgx-h100"))
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
