#!/usr/bin/env python3
"""`gpuvet check --level standard` end to end: the device probes (src/bench/probes.c) run
through the fake libcuda (tests/fakes/fake_cuda.c) with 8 devices at the PCI addresses of
the dgx-h100 fixture, NVML answered by the fake libnvidia-ml playing the healthy 8x H100
scenario, and the device checks (src/checks/device.c) judge them.

    test_check_standard.py GPUVET FAKE_LIBCUDA FAKE_LIBNVML

Cases: healthy (every device.* and pcie.link_under_load result passes, exit 0, and the
wall time of the 8-GPU run is printed and must stay under the 60 s budget); one GPU's H2D
slow (device.h2d fails for that GPU only); a kernel computing wrong results and a kernel
launch failing (device.functional fails); a hung peer copy (device.p2p becomes an error
naming the probe, and the run still ends within its deadlines); the degraded fixture (a
link that stays at Gen4 x8 or Gen1 under load fails pcie.link_under_load); a Blackwell
board whose NVLink5 counters grow while the peer copies run (gpu.nvlink fails); PoCL's CPU
device only (never judged as a GPU); a capture replayed without a device library (the
probes do not run). Exit 0 when every case holds, 1 otherwise."""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "fakes"))
import fakeenv  # noqa: E402  (time_scale)
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "fixtures"))
import fixture_cache  # noqa: E402  (the shared fixture trees)

HERE = os.path.dirname(os.path.abspath(__file__))
TESTS = os.path.join(HERE, "..")
PCI_IDS = os.path.join(TESTS, "fixtures", "pci.ids")
SCENARIO = os.path.join(HERE, "nvml-scenarios", "golden-h100-sxm-8gpu.scn")
GPUS = ["0000:1b:00.0", "0000:43:00.0", "0000:52:00.0", "0000:61:00.0",
        "0000:9d:00.0", "0000:c3:00.0", "0000:d1:00.0", "0000:df:00.0"]
PROBED = ["device.functional", "device.h2d", "device.d2h", "device.memory_bandwidth", "device.p2p",
          "pcie.link_under_load"]
# A healthy 8x H100 SXM as the fake plays it: PCIe 55 GB/s per direction (the H100
# baseline), HBM 3000 GB/s (triad baseline 2848), NVLink peer copies 400 GB/s (376).
HEALTHY = {"FAKE_CUDA_DEVICES": "8", "FAKE_CUDA_PCI_BUS_IDS": ",".join(GPUS), "FAKE_CUDA_PCIE_GBPS": "55",
           "FAKE_CUDA_BW_GBPS": "3000", "FAKE_CUDA_P2P_GBPS": "400"}
BUDGET_S = 60.0 * fakeenv.time_scale()
# Each probe's deadline, well above its default 10-15 s and scaled with the machine's
# slowness (ASan): the verdicts must not depend on a probe finishing in time. On a host
# loaded ten times over its cores (seen here with the test suites of four worktrees at
# once), the memory probe of 8 fake GPUs passed its default 10 s; the hung case below sets
# its own short deadline.
PROBE_TIMEOUT_S = int(60 * fakeenv.time_scale())

failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what)
    return cond


class Runner:
    def __init__(self, gpuvet, cuda, nvml, tmp):
        self.gpuvet, self.cuda, self.tmp = gpuvet, cuda, tmp
        libdir = os.path.join(tmp, "nvml")
        os.makedirs(libdir, exist_ok=True)
        self.nvml = os.path.join(libdir, "libnvidia-ml.so.1")
        shutil.copyfile(nvml, self.nvml)

    def run(self, root, fake_env, args=(), cuda=True, timeout=120):
        env = {k: v for k, v in os.environ.items() if not k.startswith(("FAKE_CUDA_", "FAKE_NVML_", "GPUVET_"))}
        env.update(GPUVET_PCI_IDS=PCI_IDS, GPUVET_NVML_LIB=self.nvml, FAKE_NVML_SCENARIO=SCENARIO)
        if cuda:
            env["GPUVET_CUDA_LIB"] = self.cuda
        env.update(fake_env)
        out = os.path.join(self.tmp, "report.json")
        if os.path.exists(out):
            os.unlink(out)
        cmd = [self.gpuvet, "check", "--level", "standard", "--root", root, "--json", out, "--quiet"]
        cmd += ["--probe-timeout", str(PROBE_TIMEOUT_S)]
        cmd += list(args)  # after: a case's own --probe-timeout PROBE=SEC wins
        start = time.monotonic()
        p = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=timeout)
        wall = time.monotonic() - start
        try:
            with open(out) as f:
                report = json.load(f)
        except (OSError, ValueError):
            report = {"checks": []}
            check(False, "%s: no JSON report (exit %d): %s" % (" ".join(args) or "run", p.returncode, p.stderr[-500:]))
        return p, report, wall


def results(report, check_id):
    return {r["subject"]: r for r in report.get("checks", []) if r["id"] == check_id}


def main():
    gpuvet, cuda, nvml = sys.argv[1:4]
    # --- the option: documented, and a bad value is a usage error
    p = subprocess.run([gpuvet, "check", "--help"], capture_output=True, text=True)
    check("--backend NAME" in p.stdout and "cuda, opencl or auto" in p.stdout, "check --help documents --backend")
    p = subprocess.run([gpuvet, "check", "--level", "standard", "--backend", "nope"], capture_output=True, text=True)
    check(p.returncode == 2 and "--backend: expected cuda, opencl or auto" in p.stderr,
          "--backend nope: exit 2 with a message, got %d %s" % (p.returncode, p.stderr))
    fixtures = fixture_cache.ensure("dgx-h100", "dgx-h100-degraded", "cpu-only")
    root = os.path.join(fixtures, "dgx-h100")
    with tempfile.TemporaryDirectory() as tmp:
        r = Runner(gpuvet, cuda, nvml, tmp)

        # --- healthy: every probed check passes on all 8 GPUs, within the budget
        p, rep, wall = r.run(root, HEALTHY)
        check(p.returncode == 0, "healthy: exit 0, got %d: %s" % (p.returncode, p.stderr[-500:]))
        for cid in PROBED:
            got = results(rep, cid)
            check(sorted(got) == GPUS, "healthy: %s has a result per GPU, got %s" % (cid, sorted(got)))
            for subj, res in got.items():
                check(res["status"] == "pass", "healthy: %s %s passes: %s" % (cid, subj, res["summary"]))
        h2d = results(rep, "device.h2d").get(GPUS[0], {})
        check("of the 55 GB/s baseline" in (h2d.get("observed") or ""), "healthy: H2D against the baseline: %s" % h2d)
        ev = {e["key"]: e["value"] for e in h2d.get("evidence", [])} if isinstance(h2d.get("evidence"), list) else h2d.get("evidence", {})
        check("Gen5 x16" in json.dumps(ev), "healthy: H2D names the PCIe link the node reports: %s" % ev)
        print("check --level standard, dgx-h100 fixture, 8 fake GPUs: %.2f s wall (budget %.0f s)" % (wall, BUDGET_S))
        check(wall < BUDGET_S, "healthy run took %.1f s, over the %.0f s budget" % (wall, BUDGET_S))

        # --- one GPU's H2D slow: device.h2d fails for it alone. Only the probes the selected
        # check judges run (functional, transfer): no peer copy is made.
        log = os.path.join(tmp, "cuda.log")
        env = dict(HEALTHY, FAKE_CUDA_PCIE_GBPS="55,55,55,20,55", FAKE_CUDA_LOG=log)
        p, rep, _ = r.run(root, env, ["--only", "device.h2d"])
        check(p.returncode == 1, "slow h2d: exit 1, got %d" % p.returncode)
        with open(log) as f:
            calls = {line.split()[0] for line in f if line.strip()}
        check("cuMemcpyHtoDAsync_v2" in calls and "cuMemcpyPeerAsync" not in calls,
              "--only device.h2d: the transfer probe runs, the p2p probe does not (%s)" % sorted(calls)[:40])
        check({x["id"] for x in rep["checks"]} == {"device.h2d"}, "--only device.h2d: only it reports")
        got = results(rep, "device.h2d")
        for i, bus in enumerate(GPUS):
            want = "fail" if i == 3 else "pass"
            check(got.get(bus, {}).get("status") == want, "slow h2d: device.h2d %s %s, got %s" %
                  (bus, want, got.get(bus, {}).get("summary")))

        # --- a kernel that computes wrong results; a kernel launch that fails
        p, rep, _ = r.run(root, dict(HEALTHY, FAKE_CUDA_WRONG_KERNEL="fill_u32"), ["--only", "device.functional"])
        got = results(rep, "device.functional")
        check(p.returncode == 1 and len(got) == 8 and all(x["status"] == "fail" and "wrong kernel result" in x["summary"]
                                                          for x in got.values()),
              "wrong fill_u32: device.functional fails on every GPU: %s" % [x["summary"] for x in got.values()][:2])
        p, rep, _ = r.run(root, dict(HEALTHY, FAKE_CUDA_FAIL="cuLaunchKernel:CUDA_ERROR_LAUNCH_FAILED:call=3"),
                          ["--only", "device.functional"])
        got = results(rep, "device.functional")
        for i, bus in enumerate(GPUS):
            res = got.get(bus, {})
            if i == 2:
                check(res.get("status") == "fail" and "CUDA_ERROR_LAUNCH_FAILED" in res.get("summary", ""),
                      "failing launch: device.functional fails for GPU 2 naming the error: %s" % res)
            else:
                check(res.get("status") == "pass", "failing launch: GPU %d still passes: %s" % (i, res.get("summary")))

        # --- a peer copy that never returns: the p2p probe's deadline makes it an error
        # Its own deadline, short (--probe-timeout p2p=SEC): the others keep theirs, so the
        # case costs seconds, not the scaled 30-45 s, and the verdict still does not hang on
        # how fast the machine is (the copy never returns).
        deadline = 3
        p, rep, wall = r.run(root, dict(HEALTHY, FAKE_CUDA_HANG="cuMemcpyPeerAsync"),
                             args=["--probe-timeout", "p2p=%d" % deadline, "--only", "device.p2p,device.h2d"])
        got = results(rep, "device.p2p")
        host = got.get("host", {})
        check(host.get("status") == "error" and "the p2p probe failed: timed out" in host.get("summary", ""),
              "hung peer copy: device.p2p errors naming the probe: %s" % host)
        check("timed out after %d s in probe-p2p" % deadline in host.get("summary", ""),
              "hung peer copy: the probe ran under the %d s deadline asked for: %s" % (deadline, host.get("summary")))
        check(all(x["status"] == "pass" for x in results(rep, "device.h2d").values()),
              "hung peer copy: the other probes still pass")
        print("hung peer copy: %.2f s wall" % wall)
        check(wall < BUDGET_S, "hung run took %.1f s, over the %.0f s budget" % (wall, BUDGET_S))

        # --- the degraded fixture: links that stay down under load
        p, rep, _ = r.run(os.path.join(fixtures, "dgx-h100-degraded"), HEALTHY, ["--only", "pcie.link_under_load"])
        got = results(rep, "pcie.link_under_load")
        for bus in GPUS:
            want = "fail" if bus in ("0000:61:00.0", "0000:d1:00.0") else "pass"
            check(got.get(bus, {}).get("status") == want, "degraded: pcie.link_under_load %s %s, got %s" %
                  (bus, want, got.get(bus, {}).get("summary")))
        check("Gen4 x8 under load" in (got.get("0000:61:00.0", {}).get("observed") or ""),
              "degraded: the observed link under load is Gen4 x8: %s" % got.get("0000:61:00.0"))

        # --- Blackwell: its links answer NOT_SUPPORTED for the legacy error counters and count
        # in the NVLink5 fields. Read again after the peer copies loaded the links, GPU 1's
        # symbol errors and GPU 2's failed recovery grew: any growth fails (DCGM 4.6's rule).
        b200 = os.path.join(HERE, "nvml-scenarios", "golden-b200-nvlink5.scn")
        # The switch by count: the read after the probes is the second nvmlInit, however long
        # the probes take on a busy machine.
        later = "%s:init=2" % os.path.join(HERE, "nvml-scenarios", "golden-b200-nvlink5-later.scn")
        p, rep, _ = r.run(root, dict(HEALTHY, FAKE_NVML_SCENARIO=b200, FAKE_NVML_SCENARIO_LATER=later),
                          ["--only", "gpu.nvlink,device.p2p"])
        got = results(rep, "gpu.nvlink")
        for i, bus in enumerate(GPUS):
            want = "fail" if i in (1, 2) else "pass"
            check(got.get(bus, {}).get("status") == want, "nvlink5: gpu.nvlink %s %s, got %s" %
                  (bus, want, got.get(bus, {}).get("summary")))
        check("while the probes ran" in got.get(GPUS[1], {}).get("summary", "") and
              "5 symbol errors" in got.get(GPUS[1], {}).get("summary", ""),
              "nvlink5: the symbol errors under load are named: %s" % got.get(GPUS[1], {}).get("summary"))
        check("1 failed recovery events" in got.get(GPUS[2], {}).get("summary", ""),
              "nvlink5: the failed recovery is named: %s" % got.get(GPUS[2], {}).get("summary"))
        check(got.get(GPUS[0], {}).get("summary") == "all 18 NVLinks active, no errors",
              "nvlink5: a clean Blackwell GPU passes on its NVLink5 counters: %s" % got.get(GPUS[0], {}).get("summary"))

        # --- PoCL's CPU device only: never judged as a GPU
        have_pocl = os.path.isdir("/etc/OpenCL/vendors") and os.listdir("/etc/OpenCL/vendors")
        if have_pocl:
            p, rep, _ = r.run(os.path.join(fixtures, "cpu-only"), {}, ["--backend", "opencl"], cuda=False)
            for cid in PROBED:
                got = results(rep, cid).get("host", {})
                check(got.get("status") == "skip" and
                      "no GPU device for the probes (only a CPU OpenCL device" in got.get("summary", ""),
                      "cpu opencl only: %s skips naming the CPU device: %s" % (cid, got))
            p, rep, _ = r.run(root, {}, ["--backend", "opencl"], cuda=False)
            got = results(rep, "device.functional").get("host", {})
            check(got.get("status") == "error" and "cannot probe the node's 8 GPU(s)" in got.get("summary", ""),
                  "cpu opencl only on an 8-GPU node: device.functional errors: %s" % got)
        else:
            print("note: no OpenCL ICD installed, the CPU-device case is not exercised")

        # --- a capture replayed without naming a device library: no probe runs
        p, rep, _ = r.run(root, {}, cuda=False)
        for cid in PROBED:
            got = results(rep, cid).get("host", {})
            check(got.get("status") == "skip" and "--root names a capture" in got.get("summary", ""),
                  "replay: %s skips: %s" % (cid, got))

    print("%d failures" % len(failures))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
