#!/usr/bin/env python3
"""`gpuvet bench rdma` between two gpuvet processes on 127.0.0.1 over the fake libibverbs
(tests/fakes/fake_verbs.c: RC QPs whose RDMA WRITE/READ move bytes over loopback TCP, at a
capped rate). This kernel has no RDMA (no Soft-RoCE), so the figures are the fake's:
bandwidth is read back against the cap and judged against the fake port's link rate.
Checked: perftest's rows and units, the data verification, the latency section, the JSON
(gpuvet.bench-rdma/1), the verdict for a fast and a slow link, RoCE's GID choice, and the
bad input and faults: an unreachable peer, an unknown device or port, a port down, no
library, no device, a completion error, a peer that hangs (stopped, or its HCA silent).

Usage: test_bench_rdma.py GPUVET FAKE_LIBIBVERBS FAKE_LIBCUDA"""
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "fakes"))
import fakeenv  # noqa: E402  (wall-clock bounds scale with a busy or sanitized run)

SCALE = fakeenv.time_scale()
GPUVET, FAKE_VERBS, FAKE_CUDA = sys.argv[1:4]
failures = []
TMP = tempfile.mkdtemp(prefix="gpuvet-rdma-")


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what)
    return cond


free_port = fakeenv.free_port


def env(extra=None):
    e = {k: v for k, v in os.environ.items() if not k.startswith(("FAKE_", "GPUVET_"))}
    e.update({"GPUVET_VERBS_LIB": FAKE_VERBS, "FAKE_VERBS_DEVICES": "mlx5_0:ib:1x:SDR", "GPUVET_CUDA_LIB": FAKE_CUDA,
              "FAKE_CUDA_DEVICES": "2"})
    e.update(extra or {})
    return e


def start_server(args, extra=None, name="server"):
    out = os.path.join(TMP, name + ".json")
    p = subprocess.Popen([GPUVET, "bench", "rdma", "--server", "--json", out] + args, env=env(extra),
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    p.json_path = out
    return p


def finish(p, timeout):
    try:
        p.stdout_text, p.stderr_text = p.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        p.kill()
        p.stdout_text, p.stderr_text = p.communicate()
        p.returncode = -999
    p.rep = json.load(open(p.json_path)) if os.path.exists(p.json_path) else None
    return p


def client(args, extra=None, timeout=60):
    out = os.path.join(TMP, "client.json")
    if os.path.exists(out):
        os.unlink(out)
    t0 = time.monotonic()
    p = subprocess.run([GPUVET, "bench", "rdma", "--json", out] + args, env=env(extra), capture_output=True,
                       text=True, timeout=timeout * SCALE)
    p.seconds = time.monotonic() - t0
    p.rep = json.load(open(out)) if os.path.exists(out) else None
    return p


def pair(server_args, client_args, server_env=None, client_env=None, timeout=60):
    port = free_port()
    srv = start_server(["--port", str(port)] + server_args, server_env)
    c = client(["--peer", "127.0.0.1:%d" % port] + client_args, client_env, timeout)
    finish(srv, 30 * SCALE)
    return srv, c


def verdicts(rep):
    return {v["test"]: v for v in (rep or {}).get("verdicts", [])}


def main():
    t_all = time.monotonic()
    # --- a fast link: 1X SDR carries 2 Gb/s of data and the fake moves at most that; passing
    # needs 90% of it. What a busy machine's loopback TCP delivers is not the test's to
    # decide: the figure must read the cap back within reason, and the verdict must be the
    # one its own thresholds give that figure (pass on a quiet machine). 48 messages of 2 MiB
    # (0.4 s a test) keep a scheduling hiccup small beside the run.
    common = ["--size", "2M", "-n", "48", "--lat-iters", "8"]
    srv, c = pair(common, common, client_env={"FAKE_VERBS_RATE_GBPS": "2"},
                  server_env={"FAKE_VERBS_RATE_GBPS": "2"})
    rep = c.rep
    check(c.returncode in (0, 1), "a clean run ends, got %d: %s %s" % (c.returncode, c.stderr, c.stdout[-800:]))
    check(srv.returncode == 0, "the server exits 0, got %d: %s" % (srv.returncode, srv.stderr_text))
    check(rep and rep["schema"] == "gpuvet.bench-rdma/1" and rep["role"] == "client", "schema and role named")
    check(rep and rep["units"]["bandwidth"].startswith("Gb/s") and "MiB/s" in rep["units"]["bandwidth_mibps"]
          and rep["units"]["latency"].startswith("usec"), "units say perftest's conventions: %s" % (rep or {}).get("units"))
    dev = (rep or {}).get("device") or {}
    check(dev.get("name") == "mlx5_0" and dev.get("port") == 1 and dev.get("link_layer") == "InfiniBand"
          and dev.get("speed") == "SDR" and dev.get("lanes") == 1 and dev.get("link_data_gbps") == 2.0
          and dev.get("link_signal_gbps") == 2.5 and dev.get("lid") == 1 and dev.get("mtu") == 4096,
          "the fake's port: %s" % dev)
    for test in ("write_bw", "read_bw"):
        rows = (rep or {}).get(test, [])
        ok = check(len(rows) == 1 and rows[0]["bytes"] == 2097152 and rows[0]["iterations"] == 48
                   and rows[0]["verified"] and rows[0]["verify_error"] is None, "%s: one verified row: %s" % (test, rows))
        if ok:
            r = rows[0]
            check(1.0 <= r["bw_average_gbps"] <= 2.01 and r["bw_peak_gbps"] >= r["bw_average_gbps"] - 1e-9,
                  "%s reads the fake's 2 Gb/s back: %s" % (test, r))
            check(abs(r["bw_average_mibps"] - r["bw_average_gbps"] * 1e9 / 8 / 1048576) < 1e-6,
                  "%s: MiB/s is the same figure in perftest's MB/sec" % test)
            check(abs(r["msg_rate_mpps"] - r["bw_average_gbps"] * 1e9 / 8 / 2097152 / 1e6) < 1e-9,
                  "%s: message rate = bandwidth / size" % test)
    lat = (rep or {}).get("write_lat", [])
    if check(len(lat) == 1 and lat[0]["verified"], "one verified latency row: %s" % lat):
        x = lat[0]
        check(0 < x["t_min_us"] <= x["t_typical_us"] <= x["t_max_us"] and x["t_min_us"] <= x["t_avg_us"] <= x["t_max_us"]
              and x["t_p99_us"] <= x["t_max_us"] and x["t_stdev_us"] >= 0 and x["iterations"] == 8,
              "latency statistics ordered: %s" % x)
    v = verdicts(rep)

    def by_thresholds(ratio):
        return "pass" if ratio >= 0.9 else "warn" if ratio >= 0.75 else "fail"
    statuses = []
    for test in ("write_bw", "read_bw"):
        x = v.get(test, {})
        want = by_thresholds(x.get("observed_gbps", 0) / 2.0)
        statuses.append(want)
        check(x.get("status") == want, "%s at %.3f of 2 Gb/s is %s: %s" % (test, x.get("observed_gbps", 0), want, x))
    check(v.get("verification", {}).get("status") == "pass", "the data verified: %s" % v.get("verification"))
    if statuses != ["pass", "pass"]:
        print("note: this machine's loopback moved less than 90%% of the fake's 2 Gb/s (%s)" % statuses)
    check(abs(v.get("write_bw", {}).get("ratio", 0) - v.get("write_bw", {}).get("observed_gbps", 0) / 2.0) < 1e-9
          and v.get("write_bw", {}).get("pass_ratio") == 0.9 and v.get("write_bw", {}).get("warn_ratio") == 0.75,
          "ratio against the 2 Gb/s data rate, thresholds from baselines.json")
    worst = "fail" if "fail" in statuses else "warn" if "warn" in statuses else "pass"
    check(rep and rep["summary"]["verdict"] == worst and rep["failure"] is None and rep["error"] is None
          and c.returncode == (1 if worst == "fail" else 0), "summary verdict %s, exit %d" % (worst, c.returncode))
    check("RDMA_Write BW Test" in c.stdout and "BW average[Gb/sec]" in c.stdout and "t_typical[usec]" in c.stdout
          and "99.9% percentile[usec]" in c.stdout and "verified" in c.stdout, "text has perftest's columns")
    srep = srv.rep or {}
    check(srep.get("role") == "server" and all(r["verified"] and r["bw_average_gbps"] is None
                                                for r in srep.get("write_bw", []) + srep.get("read_bw", []))
          and len(srep.get("write_lat", [])) == 1, "the server reports what it verified, figures left to the client")

    # --- a slow link: the fake moves 1.2 Gb/s of the 2 (60%) -> fail, exit 1
    small = ["--size", "1M", "-n", "6", "--tests", "write_bw"]
    srv, c = pair(small, small, client_env={"FAKE_VERBS_RATE_GBPS": "1.2"})
    v = verdicts(c.rep)
    check(c.returncode == 1 and v.get("write_bw", {}).get("status") == "fail"
          and v["write_bw"]["observed_gbps"] <= 1.21 and "of the link's 2 Gb/s data rate" in v["write_bw"]["summary"],
          "a link at 60%% fails: %d %s" % (c.returncode, v))
    check(srv.returncode == 0, "its server verified the data: %d %s" % (srv.returncode, srv.stderr_text))

    # --- the sweep (-a: 2 B .. 8 MiB in powers of two), every size verified, no cap
    quick = ["-a", "-n", "3", "--lat-iters", "3", "-t", "4"]
    srv, c = pair(quick, quick)
    rep = c.rep or {}
    sizes = [2 ** k for k in range(1, 24)]
    check(c.returncode == 0 and [r["bytes"] for r in rep.get("write_bw", [])] == sizes
          and [r["bytes"] for r in rep.get("read_bw", [])] == sizes
          and [r["bytes"] for r in rep.get("write_lat", [])] == sizes,
          "-a sweeps 2..8388608: %d %s" % (c.returncode, c.stderr))
    check(all(r["verified"] for t in ("write_bw", "read_bw", "write_lat") for r in rep.get(t, [])),
          "every size of every test verified")
    check(rep.get("options", {}).get("tx_depth") == 4 and rep.get("options", {}).get("tests") ==
          ["write_bw", "read_bw", "write_lat"], "options echoed: %s" % rep.get("options"))

    # --- RoCE: the RoCE v2 IPv4-mapped GID (index 1), as perftest picks
    eth = {"FAKE_VERBS_DEVICES": "mlx5_2:eth:4x:EDR"}
    # (latency only: uncapped loopback TCP is far from 100 Gb/s, and the verdict would say so)
    one = ["--size", "64K", "-n", "4", "--lat-iters", "4", "--tests", "write_lat"]
    srv, c = pair(one, one, eth, eth)
    dev = (c.rep or {}).get("device") or {}
    check(c.returncode == 0 and dev.get("link_layer") == "Ethernet" and dev.get("gid_index") == 1
          and dev.get("roce_v2") is True and dev.get("gid") == "::ffff:127.0.0.1" and dev.get("mtu") == 1024
          and dev.get("link_data_gbps") == 100.0, "RoCE: GID index 1, v2, 100 Gb/s: %d %s %s" % (c.returncode, dev, c.stderr))

    # --- GPU memory (the fake libcuda's device memory is host memory): dma-buf first, then
    # nvidia_peermem's ibv_reg_mr on the device address, then a message naming both paths
    gpu = ["--size", "1M", "-n", "6", "--tests", "write_bw,read_bw,write_lat"]
    srv, c = pair(gpu + ["--gpu", "1"], gpu + ["--gpu", "0"], {"FAKE_VERBS_RATE_GBPS": "2"},
                  {"FAKE_VERBS_RATE_GBPS": "2"})
    rep = c.rep or {}
    check(c.returncode in (0, 1) and "dma-buf (ibv_reg_dmabuf_mr)" in (rep.get("memory") or "")
          and rep.get("memory", "").startswith("gpu0 (") and "dma-buf" in ((srv.rep or {}).get("memory") or "")
          and all(r["verified"] for r in rep.get("write_bw", []) + rep.get("read_bw", []))
          and rep.get("write_lat") == [] and "write_lat not run" in (rep.get("note") or "")
          and verdicts(rep).get("verification", {}).get("status") == "pass",
          "GPU memory over dma-buf, verified, write_lat left out: %d %s %s" % (c.returncode, rep.get("memory"), c.stderr))
    srv, c = pair(gpu, gpu + ["--gpu", "0"],
                  client_env={"FAKE_CUDA_FAIL": "cuMemGetHandleForAddressRange:CUDA_ERROR_NOT_SUPPORTED"})
    check(c.returncode == 1 or c.returncode == 0, "peermem run ends: %d %s" % (c.returncode, c.stderr))
    check("nvidia_peermem (ibv_reg_mr" in ((c.rep or {}).get("memory") or "")
          and "CUDA_ERROR_NOT_SUPPORTED" in ((c.rep or {}).get("memory") or ""),
          "without dma-buf, nvidia_peermem's path, saying why: %s" % (c.rep or {}).get("memory"))
    c = client(["--peer", "127.0.0.1:%d" % free_port(), "--gpu", "0", "--size", "64K"],
               {"FAKE_VERBS_FAULT": "dmabuf,reg_mr"})
    check(c.returncode == 1 and "dma-buf path: ibv_reg_dmabuf_mr: Operation not supported" in c.stderr
          and "nvidia_peermem path" in c.stderr and (c.rep or {}).get("failure") == "memory",
          "GPU memory that registers neither way names both paths: %d %s" % (c.returncode, c.stderr))
    c = client(["--peer", "127.0.0.1:%d" % free_port(), "--gpu", "5"])
    check(c.returncode == 2 and "--gpu 5: this node has 2 CUDA devices" in c.stderr,
          "a GPU that does not exist: exit 2: %d %s" % (c.returncode, c.stderr))

    # --- a speed code the table does not know (XDR: active_speed 0): the rate from sysfs under
    # --root, else the bandwidth is reported and not judged
    xdr = {"FAKE_VERBS_DEVICES": "mlx5_0:ib:4x:XDR"}
    root = os.path.join(TMP, "xdr-root")
    os.makedirs(os.path.join(root, "sys/class/infiniband/mlx5_0/ports/1"))
    with open(os.path.join(root, "sys/class/infiniband/mlx5_0/ports/1/rate"), "w") as f:
        f.write("800 Gb/sec (4X XDR)\n")
    one = ["--size", "64K", "-n", "4", "--tests", "write_bw"]
    srv, c = pair(one, one + ["--root", root], xdr, xdr)
    dev = (c.rep or {}).get("device") or {}
    v = verdicts(c.rep).get("write_bw", {})
    check(c.returncode == 1 and dev.get("rate_source") == "sysfs" and dev.get("link_data_gbps") == 800.0
          and dev.get("speed") == "XDR" and v.get("status") == "fail" and "from sysfs" in v.get("summary", ""),
          "XDR: 800 Gb/s from sysfs, judged: %d %s %s" % (c.returncode, dev, v))
    srv, c = pair(one, one, xdr, xdr)
    v = verdicts(c.rep).get("write_bw", {})
    check(c.returncode == 0 and ((c.rep or {}).get("device") or {}).get("rate_source") is None
          and "not judged" in v.get("summary", ""), "an unknown rate is not judged: %d %s" % (c.returncode, v))

    # --- bad input and faults
    port = free_port()
    t0 = time.monotonic()
    c = client(["--peer", "127.0.0.1:%d" % port, "--connect-timeout", "1"])
    check(c.returncode == 1 and ("127.0.0.1:%d" % port) in c.stderr and "Connection refused (errno 111)" in c.stderr
          and time.monotonic() - t0 < 6 * SCALE and (c.rep or {}).get("failure") == "peer",
          "unreachable peer: exit 1 naming host:port and errno, in time: %d %.1fs %s" % (c.returncode, c.seconds, c.stderr))
    c = client(["--peer", "127.0.0.1:%d" % port, "-d", "mlx9_9"], {"FAKE_VERBS_DEVICES": "mlx5_0:ib:4x:EDR,mlx5_1:eth:4x:HDR"})
    check(c.returncode == 2 and "no RDMA device mlx9_9 (this node has: mlx5_0, mlx5_1)" in c.stderr,
          "unknown device: exit 2 listing the devices: %d %s" % (c.returncode, c.stderr))
    c = client(["--peer", "127.0.0.1:%d" % port, "-d", "mlx5_0:2"])
    check(c.returncode == 2 and "mlx5_0 has no port 2" in c.stderr, "unknown port: exit 2: %d %s" % (c.returncode, c.stderr))
    c = client(["--peer", "127.0.0.1:%d" % port, "-d", "mlx5_0"], {"FAKE_VERBS_DEVICES": "mlx5_0:ib:4x:EDR:down"})
    check(c.returncode == 1 and "mlx5_0 port 1 is DOWN, not ACTIVE" in c.stderr and (c.rep or {}).get("failure") == "port",
          "port down: exit 1: %d %s" % (c.returncode, c.stderr))
    c = client(["--peer", "127.0.0.1:%d" % port], {"FAKE_VERBS_DEVICES": ""})
    check(c.returncode == 1 and "no RDMA device" in c.stderr, "no device: exit 1: %d %s" % (c.returncode, c.stderr))
    c = client(["--peer", "127.0.0.1:%d" % port], {"GPUVET_VERBS_LIB": "/nonexistent/libibverbs.so.1"})
    check(c.returncode == 1 and "/nonexistent/libibverbs.so.1" in c.stderr and "apt install libibverbs1" in c.stderr
          and (c.rep or {}).get("failure") == "library", "no library: exit 1 naming the package: %d %s" % (c.returncode, c.stderr))

    # a completion error: the server's HCA refuses the 3rd request
    one = ["--size", "4K", "-n", "10", "--lat-iters", "4"]
    srv, c = pair(one, one, server_env={"FAKE_VERBS_FAULT": "wc_error=3"})
    check(c.returncode == 1 and "IBV_WC_REM_ACCESS_ERR" in c.stderr and (c.rep or {}).get("failure") == "verbs"
          and verdicts(c.rep).get("run", {}).get("status") == "error",
          "a completion error: exit 1 naming the status: %d %s" % (c.returncode, c.stderr))
    check(srv.returncode == 1 and "IBV_WC_REM_ACCESS_ERR" in srv.stderr_text, "the server says why the client stopped")
    # QP transition failure
    srv, c = pair(one + ["--step-timeout", "5"], one, client_env={"FAKE_VERBS_FAULT": "rtr"})
    check(c.returncode == 1 and "ibv_modify_qp to RTR" in c.stderr and srv.returncode == 1,
          "RTR failure: exit 1 on both sides: %d %s" % (c.returncode, c.stderr))
    # the server's HCA stops answering after 5 requests: the client's step deadline
    step = max(1, int(round(2 * SCALE)))
    t0 = time.monotonic()
    srv, c = pair(one + ["--step-timeout", str(step)], one + ["--step-timeout", str(step)],
                  server_env={"FAKE_VERBS_FAULT": "hang=5"})
    check(c.returncode == 1 and "5 of 10 requests completed within" in c.stderr and c.seconds < (step + 6) * SCALE,
          "a silent peer HCA hits the step deadline: %d %.1fs %s" % (c.returncode, c.seconds, c.stderr))
    # a hung peer process (stopped) during the handshake
    port = free_port()
    srv = start_server(["--port", str(port)] + one, name="stopped")
    time.sleep(0.5 * SCALE)
    os.kill(srv.pid, signal.SIGSTOP)
    try:
        c = client(["--peer", "127.0.0.1:%d" % port, "--step-timeout", str(step)] + one)
    finally:
        os.kill(srv.pid, signal.SIGCONT)
        srv.kill()
        finish(srv, 10)
    check(c.returncode == 1 and "no answer from the peer 127.0.0.1:%d" % port in c.stderr and "hung" in c.stderr
          and c.seconds < (step + 6) * SCALE, "a stopped peer: exit 1 at the deadline: %d %.1fs %s" % (c.returncode, c.seconds, c.stderr))

    # a server started for smaller sizes than the client asks: both say so
    srv, c = pair(["--size", "64K"], ["--size", "1M", "--tests", "write_bw"])
    check(c.returncode == 1 and "started for 65536" in c.stderr and srv.returncode == 2,
          "a server too small for the client's sizes: %d %d %s" % (c.returncode, srv.returncode, c.stderr))

    # bad options
    for args, word in ((["--server", "--peer", "x"], "either --server"), ([], "either --server"),
                       (["--peer", "h", "--size", "0"], "--size"), (["--peer", "h", "--tests", "bogus"], "--tests"),
                       (["--peer", "h:99999"], "--peer"), (["--peer", "h", "-t", "0"], "-t: expected a whole number from 1 to 4096"),
                       (["--peer", "h", "--step-timeout", "5x"], "--step-timeout: expected a duration"),
                       (["--peer", "h", "--size", "0.5M"], "--size: expected a size from 1 to 512M"),
                       # parsed (durations and sizes with units), then refused for the role
                       (["--peer", "h", "--step-timeout", "1m", "--connect-timeout", "90s", "-s", "64KiB",
                         "--server"], "either --server")):
        p = subprocess.run([GPUVET, "bench", "rdma"] + args, env=env(), capture_output=True, text=True, timeout=30)
        check(p.returncode == 2 and word in p.stderr, "%s: exit 2 naming %s; got %d %s" % (args, word, p.returncode, p.stderr))
    p = subprocess.run([GPUVET, "bench", "--list"], env=env(), capture_output=True, text=True, timeout=30)
    check("rdma" in p.stdout, "bench --list names rdma")

    print("test_bench_rdma: %.1f s" % (time.monotonic() - t_all))
    if failures:
        print("%d failure(s)" % len(failures))
        return 1
    print("ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
