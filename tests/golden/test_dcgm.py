#!/usr/bin/env python3
"""`gpuvet check --with-dcgm LEVEL` end to end: the dcgmi stand-in (tests/fakes/fake_dcgmi.py)
prints dcgmi diag JSON from tests/fakes/dcgmi, on the dgx-h100 fixture with the fake
libnvidia-ml playing its 8 GPUs (so DCGM's GPU ids map to their PCI addresses).

    test_dcgm.py GPUVET FAKE_LIBNVML

Cases: the real DCGM 3.1 level-1 and level-3 captures and the DCGM 4.x one (pass, one
result per test and GPU); text before the JSON (read past, as DCGM's readers do); results
listing several GPUs (on each of them); a failing run (exit 226: fail on the GPU DCGM
names, and on every GPU a result lists); a runtime
error and an unreachable host engine (error); output that is not JSON (error); a dcgmi
that hangs (error at --dcgm-timeout, on time); one that cannot start (error); without
--with-dcgm, and on a capture without $GPUVET_DCGMI (skip); the level passed through;
bad option values (exit 2). Exit 0 when every case holds, 1 otherwise."""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "fakes"))
import fakeenv  # noqa: E402  (time_scale)
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from testlib import check, finish  # noqa: E402
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "fixtures"))
import fixture_cache  # noqa: E402  (the shared fixture trees)

HERE = os.path.dirname(os.path.abspath(__file__))
TESTS = os.path.join(HERE, "..")
PCI_IDS = os.path.join(TESTS, "fixtures", "pci.ids")
SCENARIO = os.path.join(HERE, "nvml-scenarios", "golden-h100-sxm-8gpu.scn")
CAPTURES = os.path.join(TESTS, "fakes", "dcgmi")
FAKE_DCGMI = os.path.join(TESTS, "fakes", "fake_dcgmi.py")
GPUS = ["0000:1b:00.0", "0000:43:00.0", "0000:52:00.0", "0000:61:00.0",
        "0000:9d:00.0", "0000:c3:00.0", "0000:d1:00.0", "0000:df:00.0"]



class Runner:
    def __init__(self, gpuvet, nvml, root, tmp):
        self.gpuvet, self.root, self.tmp = gpuvet, root, tmp
        self.nvml = os.path.join(tmp, "libnvidia-ml.so.1")
        shutil.copyfile(nvml, self.nvml)
        self.args_log = os.path.join(tmp, "dcgmi-args")

    def run(self, args, fake=None, dcgmi=FAKE_DCGMI, root=None, timeout=120):
        env = {k: v for k, v in os.environ.items() if not k.startswith(("FAKE_", "GPUVET_"))}
        env.update(GPUVET_PCI_IDS=PCI_IDS, GPUVET_NVML_LIB=self.nvml, FAKE_NVML_SCENARIO=SCENARIO,
                   FAKE_DCGMI_ARGS=self.args_log)
        if dcgmi:
            env["GPUVET_DCGMI"] = dcgmi
        env.update(fake or {})
        if os.path.exists(self.args_log):
            os.unlink(self.args_log)
        cmd = [self.gpuvet, "check", "--root", root or self.root, "--only", "dcgm", "--json", "-"] + list(args)
        start = time.monotonic()
        p = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=timeout)
        wall = time.monotonic() - start
        try:
            results = json.loads(p.stdout)["checks"]
        except (ValueError, KeyError):
            results = []
            check(False, "%s: a JSON report (exit %d): %s" % (" ".join(args), p.returncode, p.stderr[-300:]))
        return p, results, wall


def capture(name):
    return {"FAKE_DCGMI_OUTPUT": os.path.join(CAPTURES, name)}


def main():
    gpuvet, nvml = sys.argv[1:3]
    root = fixture_cache.path("dgx-h100")
    with tempfile.TemporaryDirectory() as tmp:
        r = Runner(gpuvet, nvml, root, tmp)

        # Real DCGM 3.1 level 1: nine Deployment tests, no GPU named; a run line first.
        p, res, _ = r.run(["--with-dcgm", "1"], capture("r1-dcgm3.1-virtualclient.json"))
        check(p.returncode == 0, "3.1 r1: exit 0, got %d" % p.returncode)
        check(len(res) == 10 and res[0]["subject"] == "host" and res[0]["status"] == "pass"
              and res[0]["summary"] == "DCGM diagnostic level 1: 9 results, none failed",
              "3.1 r1: the run line passes with 9 results: %s" % (res[:1],))
        check([x["summary"] for x in res[1:4]] == ["DCGM Denylist: pass", "DCGM NVML Library: pass",
                                                   "DCGM CUDA Main Library: pass"],
              "3.1 r1: one result per test, in DCGM's order")
        check(all(x["subject"] == "host" and x["evidence"]["dcgm_test"].startswith("Deployment / ") for x in res[1:]),
              "3.1 r1: Deployment tests are the host's")
        with open(r.args_log) as f:
            check(f.read().split() == ["diag", "-r", "1", "-j"], "dcgmi was run as `dcgmi diag -r 1 -j`")

        # Real DCGM 3.1 level 3: per-GPU results (gpu_ids "0"), one skipped.
        p, res, _ = r.run(["--with-dcgm", "3"], capture("r3-dcgm3.1-virtualclient.json"))
        with open(r.args_log) as f:
            check(f.read().split() == ["diag", "-r", "3", "-j"], "the level is passed through (-r 3)")
        eud = [x for x in res if x["evidence"].get("dcgm_test") == "Hardware / EUD Test"]
        check(len(eud) == 1 and eud[0]["status"] == "skip" and eud[0]["subject"] == GPUS[0],
              "3.1 r3: the EUD test is skipped on GPU 0 (%s): %s" % (GPUS[0], eud))
        pcie = [x for x in res if x["evidence"].get("dcgm_test") == "Integration / PCIe"]
        check(len(pcie) == 1 and pcie[0]["status"] == "pass" and "13.15 GB/s" in pcie[0]["evidence"].get("dcgm_info", ""),
              "3.1 r3: the PCIe result carries DCGM's info line")
        check(p.returncode == 0 and res[0]["status"] == "pass", "3.1 r3: passes (a skip is not a failure)")

        # DCGM 4.x: entity results of 8 GPUs, mapped to their PCI addresses.
        p, res, _ = r.run(["--with-dcgm", "3"], capture("r3-dcgm4-issue215-diagnostic.json"))
        diag = [x for x in res if x["evidence"].get("dcgm_test") == "Hardware / diagnostic"]
        check(sorted(x["subject"] for x in diag) == GPUS and all(x["status"] == "pass" for x in diag),
              "4.x: the diagnostic test passes on each of the 8 GPUs, by PCI address")
        check("gigaflops" in diag[0]["evidence"].get("dcgm_info", "") or "Allocated" in diag[0]["evidence"].get("dcgm_info", ""),
              "4.x: the first info line is evidence")

        # Text before the document: the real 4.x capture after a wrapper's banner line.
        banner = "Executing in Pod nvidia-dcgm-rz9cr on Host 10.0.7.139"
        p, res, _ = r.run(["--with-dcgm", "3"], dict(capture("r3-dcgm4-issue215-diagnostic.json"), FAKE_DCGMI_BEFORE=banner))
        diag = [x for x in res if x["evidence"].get("dcgm_test") == "Hardware / diagnostic"]
        check(p.returncode == 0 and res and res[0]["status"] == "pass" and sorted(x["subject"] for x in diag) == GPUS,
              "text before the JSON: read past, the 8 GPUs pass: %s" % (res[:1],))
        check(res and res[0]["evidence"].get("text_before_json") == banner,
              "text before the JSON: its first line is evidence: %s" % (res[:1],))

        # 3.1 on 8 GPUs, a line before: each "0,1,...,7" result lands on every GPU.
        p, res, _ = r.run(["--with-dcgm", "1"], capture("r1-dcgm3.1-8gpu-banner.json"))
        check(p.returncode == 0 and res and res[0]["status"] == "pass"
              and res[0]["summary"] == "DCGM diagnostic level 1: 80 results, none failed",
              "3.1 8 GPUs: 9 Deployment tests x 8 GPUs + 8 software results pass: %s" % (res[:1],))
        denylist = [x for x in res if x["evidence"].get("dcgm_test") == "Deployment / Denylist"]
        check(sorted(x["subject"] for x in denylist) == GPUS,
              "3.1 8 GPUs: the Denylist result is on each GPU: %s" % [x["subject"] for x in denylist])

        # A failing result listed for GPUs 3 and 6 fails those two, not GPU 0.
        p, res, _ = r.run(["--with-dcgm", "1"], dict(capture("synthetic-r1-dcgm3.1-8gpu-warning-fail.json"),
                                                     FAKE_DCGMI_EXIT="226"))
        bad = [x for x in res[1:] if x["status"] == "fail"]
        check(p.returncode == 1 and sorted(x["subject"] for x in bad) == [GPUS[3], GPUS[6]]
              and all("Persistence mode" in x["summary"] for x in bad),
              "3.1 fail on \"3,6\": GPUs 3 and 6 fail, no other: %s" % [(x["subject"], x["summary"]) for x in bad])
        check(res and res[0]["evidence"].get("text_before_json", "").startswith("WARNING:"),
              "3.1 fail: the warning line before the JSON is evidence")

        # A failing run: dcgmi exits 226; the GPU DCGM names fails.
        p, res, _ = r.run(["--with-dcgm", "1"], dict(capture("synthetic-r1-dcgm4-fail.json"), FAKE_DCGMI_EXIT="226"))
        check(p.returncode == 1, "4.x fail: exit 1, got %d" % p.returncode)
        check(res[0]["status"] == "fail" and "exit 226" in res[0]["summary"] and "DCGM_ST_NVVS_ERROR" in res[0]["summary"],
              "4.x fail: the run line fails naming exit 226: %s" % res[0]["summary"])
        bad = [x for x in res[1:] if x["status"] == "fail"]
        check(len(bad) == 1 and bad[0]["subject"] == GPUS[1] and "persistence mode is off" in bad[0]["summary"]
              and bad[0]["evidence"].get("dcgm_error_id") == "29" and bad[0]["remedy"],
              "4.x fail: GPU 1 (%s) fails with DCGM's message and error id 29: %s" % (GPUS[1], bad))
        check(res[0]["evidence"].get("dcgm_version") == "4.2.3" and res[0]["evidence"].get("driver_version") == "570.133.20",
              "4.x fail: DCGM's version and the driver it saw are evidence")

        # Runs that give no result.
        p, res, _ = r.run(["--with-dcgm", "1"], capture("synthetic-runtime-error.json"))
        check(len(res) == 1 and res[0]["status"] == "error" and "unable to establish a connection" in res[0]["summary"],
              "runtime_error: one error result quoting DCGM: %s" % (res,))
        p, res, _ = r.run(["--with-dcgm", "1"], {"FAKE_DCGMI_EXIT": "235",
                                                 "FAKE_DCGMI_STDERR": "Error: unable to connect to host engine"})
        check(res and res[0]["status"] == "error" and "235" in res[0]["summary"] and "host engine" in res[0]["summary"]
              and "nvidia-dcgm" in (res[0]["remedy"] or "") and "unable to connect" in res[0]["evidence"].get("stderr", ""),
              "exit 235 without output: error naming the host engine, stderr as evidence: %s" % (res[:1],))
        garbage = os.path.join(tmp, "garbage.txt")
        with open(garbage, "w") as f:
            f.write("Successfully ran diagnostic for group.\n+---------------------------+\n")
        p, res, _ = r.run(["--with-dcgm", "1"], {"FAKE_DCGMI_OUTPUT": garbage})
        check(res and res[0]["status"] == "error" and "not JSON" in res[0]["summary"],
              "text instead of JSON: error saying so: %s" % (res[:1],))

        # A dcgmi that never finishes is killed at the deadline.
        limit = 30 * fakeenv.time_scale()
        p, res, wall = r.run(["--with-dcgm", "2", "--dcgm-timeout", "1"], {"FAKE_DCGMI_HANG": "1"})
        check(res and res[0]["status"] == "error" and "did not finish within 1 s" in res[0]["summary"],
              "hang: error at the deadline: %s" % (res[:1],))
        check(wall < limit, "hang: the run ends near its deadline (%.1f s, limit %.0f s)" % (wall, limit))

        p, res, _ = r.run(["--with-dcgm", "1"], dcgmi=os.path.join(tmp, "no-such-dcgmi"))
        check(res and res[0]["status"] == "error" and "could not be started" in res[0]["summary"],
              "a dcgmi that cannot start: error: %s" % (res[:1],))

        # Not run.
        p, res, _ = r.run([])
        check(len(res) == 1 and res[0]["status"] == "skip" and "--with-dcgm LEVEL" in res[0]["summary"],
              "without --with-dcgm: one skip naming the option")
        p, res, _ = r.run(["--with-dcgm", "1"], capture("r1-dcgm3.1-virtualclient.json"), dcgmi=None)
        check(len(res) == 1 and res[0]["status"] == "skip" and "capture" in res[0]["summary"],
              "a capture without $GPUVET_DCGMI: skip, dcgmi would test this machine: %s" % (res,))

        for bad_args in (["--with-dcgm", "0"], ["--with-dcgm", "5"], ["--with-dcgm", "x"],
                         ["--with-dcgm", "1", "--dcgm-timeout", "0"]):
            p = subprocess.run([gpuvet, "check"] + bad_args, capture_output=True, text=True)
            check(p.returncode == 2 and bad_args[-2] in p.stderr, "%s: exit 2 naming the option, got %d %s"
                  % (" ".join(bad_args), p.returncode, p.stderr.strip()))
    return finish()


if __name__ == "__main__":
    sys.exit(main())
