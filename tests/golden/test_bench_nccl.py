#!/usr/bin/env python3
"""`gpuvet bench nccl` on the fake libnccl (tests/fakes/fake_nccl.c) over the fake libcuda:
every collective, type and operation verified, busbw read back from the fake's bus
bandwidth, judged against the dgx-h100 fixture's NVLink and the seed's 8x H100 baseline;
wrong results, a hung collective, init and asynchronous failures, a missing library and bad
options each reported as the docs say. Figures here are the fakes', not a GPU's.

Usage: test_bench_nccl.py GPUVET FAKE_LIBCUDA FAKE_LIBNCCL"""
import json
import os
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


def nccl(args, env=None, timeout=120):
    e = {k: v for k, v in os.environ.items()
         if not k.startswith(("FAKE_", "NCCL_", "SLURM_", "OMPI_", "PMI_", "PMIX_", "GPUVET_", "MASTER_"))}
    e.update({"GPUVET_CUDA_LIB": FAKE_CUDA, "GPUVET_NCCL_LIB": FAKE_NCCL, "FAKE_CUDA_DEVICES": "2",
              "FAKE_NCCL_LAT_US": "0"})
    e.update(env or {})
    with tempfile.TemporaryDirectory() as d:
        out = os.path.join(d, "r.json")
        t0 = time.monotonic()
        p = subprocess.run([GPUVET, "bench", "nccl", "--json", out] + list(args), env=e, capture_output=True,
                           text=True, timeout=timeout)
        p.seconds = time.monotonic() - t0
        rep = json.load(open(out)) if os.path.exists(out) else None
    return p, rep


def verdicts(rep):
    return {m["name"]: m for m in (rep or {}).get("measurements", [])}


def main():
    # --- every collective, both placements, verified; busbw is the fake's bus bandwidth
    p, rep = nccl(["-C", "all", "-b", "16", "-e", "1M", "-f", "4", "-n", "4", "-w", "1"],
                  {"FAKE_NCCL_BUSBW_GBPS": "123"})
    check(p.returncode == 0, "clean run exits 0, got %d: %s %s" % (p.returncode, p.stderr, p.stdout[-500:]))
    check(rep and rep["schema"] == "gpuvet.bench-nccl/1", "schema named")
    rows = rep["sweep"] if rep else []
    colls = {r["collective"] for r in rows}
    check(colls == {"all_reduce", "all_gather", "reduce_scatter", "broadcast", "reduce", "alltoall", "sendrecv"},
          "every collective swept: %s" % sorted(colls))
    check(all(r["verified"] and r["wrong"] == 0 for r in rows), "every row verified with no wrong element")
    check({r["placement"] for r in rows if r["collective"] == "alltoall"} == {"out_of_place"},
          "alltoall runs out of place only")
    check({r["placement"] for r in rows if r["collective"] == "all_reduce"} == {"in_place", "out_of_place"},
          "all_reduce runs both placements")
    big = [r for r in rows if r["size_bytes"] == 1048576 and r["collective"] != "sendrecv"]
    check(big and all(abs(r["busbw_gbps"] - 123) < 0.5 for r in big),
          "busbw at 1 MiB reads the fake's 123 GB/s back: %s" % [(r["collective"], r["busbw_gbps"]) for r in big])
    ar = [r for r in rows if r["collective"] == "all_reduce" and r["size_bytes"] == 1048576][0] if rows else {}
    # nccl-tests' all_reduce: algbw = bytes / time, busbw = algbw * 2(n-1)/n (n = 2: equal)
    check(ar and abs(ar["algbw_gbps"] - ar["busbw_gbps"]) < 1e-6 and ar["count"] == 262144,
          "all_reduce 1 MiB of float: count 262144, algbw = busbw for 2 ranks: %s" % ar)
    v = verdicts(rep)
    check(len(v) == 7 and all(m["verified"] and len(m["samples"]) == 5 for m in v.values()),
          "one verified verdict per collective, 5 samples each")
    check(rep and rep["job"]["ranks"] == 2 and rep["job"]["processes"] == 1 and rep["job"]["launcher"] ==
          "single process", "the job: 2 ranks in one process: %s" % (rep or {}).get("job"))
    check("all_reduce" in p.stdout and "#wrong" in p.stdout and "busbw" in p.stdout, "text has nccl-tests' columns")

    # --- types and operations
    for dt, op in [("half", "max"), ("bfloat16", "avg"), ("int8", "prod"), ("double", "min"), ("uint64", "sum"),
                   ("int32", "avg")]:
        p, rep = nccl(["-C", "all_reduce,reduce_scatter,reduce", "-b", "1K", "-e", "64K", "-f", "8", "-d", dt, "-o", op,
                       "-n", "2", "-w", "0", "--root-rank", "1"])
        rows = (rep or {}).get("sweep", [])
        check(p.returncode == 0 and rows and all(r["wrong"] == 0 for r in rows),
              "%s %s verifies: %d %s" % (dt, op, p.returncode, p.stdout[-300:]))

    # --- judged on the dgx-h100 fixture: NVLink 450 GB/s per direction, seed baseline 450 for 8 GPUs
    root = os.path.join(fixture_cache.ensure("dgx-h100"), "dgx-h100")
    addrs = sorted(os.listdir(os.path.join(root, "proc/driver/nvidia/gpus")))
    env8 = {"FAKE_CUDA_DEVICES": "8", "FAKE_CUDA_PCI_BUS_IDS": ",".join(addrs)}
    for bw, status, code in [("420", "pass", 0), ("320", "warn", 0), ("200", "fail", 1)]:
        p, rep = nccl(["-r", root, "-C", "all_reduce", "-b", "64K", "-e", "1M", "-n", "2", "-w", "0"],
                      dict(env8, FAKE_NCCL_BUSBW_GBPS=bw))
        m = verdicts(rep).get("all_reduce", {})
        check(p.returncode == code and m.get("status") == status,
              "8 GPUs at %s GB/s: %s, exit %d; got %s, %d: %s" % (bw, status, code, m.get("status"), p.returncode,
                                                                  m.get("summary")))
        check(m.get("baseline") == 450 and m.get("peak") == 450 and "seed" in (m.get("baseline_source") or ""),
              "the seed's 8x H100 baseline and the NVLink peak: %s %s" % (m.get("baseline"), m.get("peak")))
        check(rep and rep["fabric"]["path"] == "nvlink", "the fabric is NVLink")
    p, rep = nccl(["-r", root, "-g", "0,1", "-C", "all_gather", "-b", "64K", "-e", "1M", "-n", "2"],
                  dict(env8, FAKE_NCCL_BUSBW_GBPS="400"))
    m = verdicts(rep).get("all_gather", {})
    check(m.get("status") == "pass" and m.get("baseline") is None and m.get("peak") == 450,
          "2 of the 8 GPUs: judged against NVLink alone, no seed baseline: %s" % m)

    # --- PCIe boards: the slowest GPU's link (Gen5 x16, 63.0 GB/s per direction)
    root = os.path.join(fixture_cache.ensure("rtxpro6000-server"), "rtxpro6000-server")
    addrs = sorted(os.listdir(os.path.join(root, "proc/driver/nvidia/gpus")))
    for bw, status in [("50", "pass"), ("25", "fail")]:
        p, rep = nccl(["-r", root, "-C", "all_reduce", "-b", "64K", "-e", "1M", "-n", "2"],
                      {"FAKE_CUDA_PCI_BUS_IDS": ",".join(addrs), "FAKE_NCCL_BUSBW_GBPS": bw})
        m = verdicts(rep).get("all_reduce", {})
        check(rep and rep["fabric"]["path"] == "pcie" and abs((m.get("peak") or 0) - 63.02) < 0.01 and
              m.get("status") == status, "2 PCIe Gen5 GPUs at %s GB/s: %s against 63.0: %s %s" %
              (bw, status, m.get("peak"), m.get("status")))

    # --- wrong results fail, and only while checking
    p, rep = nccl(["-C", "all_reduce", "-e", "64K", "-n", "2"], {"FAKE_NCCL_WRONG": "1"})
    m = verdicts(rep).get("all_reduce", {})
    check(p.returncode == 1 and m.get("status") == "fail" and "wrong elements" in (m.get("verify_error") or ""),
          "a wrong result fails: %d %s" % (p.returncode, m))
    p, rep = nccl(["-C", "all_reduce", "-e", "64K", "-n", "2", "-c", "0"], {"FAKE_NCCL_WRONG": "1"})
    check(p.returncode == 0 and all(r["wrong"] is None for r in (rep or {}).get("sweep", [])),
          "--check 0 verifies nothing")

    # --- a hung collective is an error naming the step, within the hang deadline
    p, rep = nccl(["-C", "all_reduce,all_gather", "-e", "64K", "-n", "2", "--hang-timeout", str(round(2 * SCALE))],
                  {"FAKE_NCCL_HANG": "ncclAllGather"}, timeout=60)
    v = verdicts(rep)
    check(p.returncode == 1 and p.seconds < 20 * SCALE, "a hang exits 1 in time: %d after %.1f s" % (p.returncode, p.seconds))
    check(v.get("all_reduce", {}).get("status") == "pass" and v.get("all_gather", {}).get("status") == "error",
          "the collective before the hang keeps its verdict, the hung one is an error")
    f = (rep or {}).get("failure") or {}
    check(f.get("hung") and (f.get("step") or {}).get("collective") == "all_gather" and
          "no progress for %d s" % round(2 * SCALE) in f.get("error", ""), "the failure names the hung step: %s" % f)

    # --- failures NCCL reports
    p, rep = nccl(["-C", "all_reduce", "-e", "64K"], {"FAKE_NCCL_FAIL": "ncclCommInitAll:ncclSystemError"})
    m = verdicts(rep).get("all_reduce", {})
    check(p.returncode == 1 and "ncclCommInitAll: ncclSystemError (2)" in m.get("summary", ""),
          "an init failure names the call and result: %s" % m.get("summary"))
    out = ((rep or {}).get("failure") or {}).get("nccl_output") or ""
    check("NCCL WARN ncclCommInitAll failed" in out and "NCCL WARN ncclCommInitAll failed" in p.stdout,
          "NCCL's warnings (NCCL_DEBUG=WARN by default) are captured into the report and the text: %r" % out)
    p, rep = nccl(["-C", "all_reduce", "-e", "64K"], {"FAKE_NCCL_ASYNC": "ncclRemoteError:after=3"})
    m = verdicts(rep).get("all_reduce", {})
    check(p.returncode == 1 and "ncclRemoteError" in m.get("summary", ""),
          "an asynchronous error (a peer's failure) is reported: %s" % m.get("summary"))
    p, rep = nccl(["-C", "all_reduce", "-e", "64K"], {"GPUVET_NCCL_LIB": "/nonexistent/libnccl.so.2"})
    m = verdicts(rep).get("all_reduce", {})
    check(p.returncode == 1 and "/nonexistent/libnccl.so.2" in m.get("summary", ""),
          "a missing NCCL is an error naming the library: %s" % m.get("summary"))
    p, rep = nccl(["-C", "all_reduce", "-e", "1G"])
    check(p.returncode == 1 and "needs 2 x 1073741824 bytes" in verdicts(rep).get("all_reduce", {}).get("summary", ""),
          "a sweep larger than the GPUs' memory says so")

    # --- the environment is recorded
    p, rep = nccl(["-C", "all_reduce", "-e", "64K"], {"NCCL_ALGO": "Ring", "NCCL_PROTO": "Simple"})
    env = (rep or {}).get("job", {}).get("environment", {})
    check(env.get("NCCL_ALGO") == "Ring" and env.get("NCCL_PROTO") == "Simple", "NCCL_* recorded: %s" % env)
    p, rep = nccl(["-C", "all_reduce", "-e", "64K"], {"NCCL_TOPO_FILE": "/nonexistent/topo.xml"})
    topo = (rep or {}).get("job", {}).get("topology_file") or {}
    check(topo.get("path") == "/nonexistent/topo.xml" and topo.get("bytes") is None and "No such file" in
          (topo.get("error") or "") and "NCCL_TOPO_FILE /nonexistent/topo.xml cannot be read" in p.stdout,
          "an unreadable NCCL_TOPO_FILE is reported: %s" % topo)

    # --- bad options: exit 2 naming the option
    for args, word in [(["-b", "x"], "--minbytes"), (["-e", "8", "-b", "1G"], "never end"), (["-f", "1"], "-f: expected a whole number from 2"),
                       (["-n", "0"], "-n: expected a whole number"), (["-d", "float7"], "-d: expected int8"),
                       (["-o", "xor"], "-o: expected sum"),
                       (["-c", "2"], "-c: expected 0 or 1"), (["-C", "allreduce"], "--collectives"),
                       (["--in-place", "--out-of-place"], "exclude"), (["-g", "x"], "--gpus"),
                       (["--hang-timeout", "0"], "--hang-timeout"), (["-g", "0,1", "--root-rank", "2"], "--root-rank"),
                       (["-b", "1", "-e", "1G", "-i", "1"], "at most 64"), (["extra"], "extra"),
                       (["--hang-timeout", "5x"], "--hang-timeout: expected a duration"),
                       # parsed (durations with units, nccl-tests' decimal sizes), then refused for the operand
                       (["--hang-timeout", "2m", "--join-timeout", "90s", "-b", "0.5K", "extra"],
                        'unexpected argument "extra"')]:
        p, _ = nccl(args)
        check(p.returncode == 2 and word in p.stderr, "%s: exit 2 naming %s; got %d %s" % (args, word, p.returncode,
                                                                                         p.stderr.strip()))
    # --- JSON alone on standard output
    e = dict(os.environ, GPUVET_CUDA_LIB=FAKE_CUDA, GPUVET_NCCL_LIB=FAKE_NCCL, FAKE_CUDA_DEVICES="2")
    p = subprocess.run([GPUVET, "bench", "nccl", "-C", "broadcast", "-e", "64K", "--json", "-"], env=e,
                       capture_output=True, text=True, timeout=60)
    try:
        ok = json.loads(p.stdout)["schema"] == "gpuvet.bench-nccl/1"
    except ValueError:
        ok = False
    check(p.returncode == 0 and ok, "--json - prints only the JSON")

    if failures:
        print("%d failure(s)" % len(failures))
        return 1
    print("ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
