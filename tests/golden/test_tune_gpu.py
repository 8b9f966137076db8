#!/usr/bin/env python3
"""gpuvet tune's GPU settings (persistence mode, power limit, applications clocks) on the
fake NVML, with the setters' changes kept in $FAKE_NVML_STATE between processes.

    test_tune_gpu.py GPUVET FAKE_NVML_LIB GPUVET_TEST_HOOKS

- plan reads every GPU and judges the wanted values against the GPU's own limits (default,
  max and min power, the default and the highest supported clocks); out of range: cannot;
- apply then revert leaves every GPU as it was, as `gpuvet query` (an independent reader)
  sees it, and the fixture's files byte-identical;
- apply killed after every step: revert restores the GPUs, apply again completes;
- NVML refusing a write (no permission) is reported as refused and the rest applies;
- a setter that never returns: apply gives up after the call deadline, says which call,
  exits 1, and revert (another process) restores what it had set;
- a GPU that fell off the bus is `cannot` for that GPU only;
- no library under a --root that is not this machine: every GPU setting says why.
Exit 0 when every case holds, 1 otherwise."""
import json
import os
import subprocess
import sys
import time
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from testlib import check, finish  # noqa: E402
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "fixtures"))
import fixture_cache  # noqa: E402  (the shared fixture trees)

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
SCENARIOS = os.path.join(REPO, "tests", "fakes", "scenarios")
GPU_SETS = ["--profile", "none", "--set", "gpu.persistence=off", "--set", "gpu.power_limit=600",
            "--set", "gpu.app_clocks=max"]
QUERY = ("pci.bus_id,persistence_mode,power.limit,enforced.power.limit,clocks.applications.memory,"
         "clocks.applications.graphics")


HOOKS = None  # gpuvet-test-hooks (main's third argument)


class Machine:
    """A writable dgx-h100 fixture plus a fake NVML scenario whose setters persist in a
    state file."""

    def __init__(self, gpuvet, lib, work, name, scenario_text=None, scenario="h100-sxm-8gpu.scn"):
        self.gpuvet, self.lib = gpuvet, lib
        self.root = fixture_cache.writable("dgx-h100", os.path.join(work, name))
        self.scenario = os.path.join(SCENARIOS, scenario)
        if scenario_text:
            self.scenario = os.path.join(work, name + ".scn")
            with open(self.scenario, "w") as f:
                f.write("include %s\n%s" % (os.path.join(SCENARIOS, scenario), scenario_text))
        self.state = os.path.join(work, name + ".nvstate")
        if os.path.exists(self.state):
            os.unlink(self.state)

    def files_changed(self):
        """The fixture's files that differ from the pristine tree (tune's own state left out)."""
        return fixture_cache.changed(self.root, "dgx-h100", ignore=(os.path.join("var", "lib", "gpuvet"),))

    def env(self, extra=None):
        return dict(os.environ, GPUVET_NVML_LIB=self.lib, FAKE_NVML_SCENARIO=self.scenario,
                    FAKE_NVML_STATE=self.state, **(extra or {}))

    def tune(self, *args, extra=None, timeout=120):
        # The kill switch exists only in gpuvet-test-hooks.
        exe = HOOKS if extra and "GPUVET_TUNE_STOP_AFTER" in extra else self.gpuvet
        return subprocess.run([exe, "tune"] + list(args) + ["--root", self.root], capture_output=True,
                              text=True, env=self.env(extra), timeout=timeout)

    def query(self):
        p = subprocess.run([self.gpuvet, "query", "--query-gpu=" + QUERY, "--format=csv,noheader"],
                           capture_output=True, text=True, env=self.env(), timeout=60)
        return p.stdout if p.returncode == 0 else "query failed: " + p.stderr

    def plan(self, *args):
        p = self.tune("plan", "--json", *args)
        try:
            return p.returncode, {s["setting"]: s for s in json.loads(p.stdout)["settings"]}
        except (ValueError, KeyError):
            return p.returncode, {"error": p.stdout + p.stderr}


def plan_judges(m):
    rc, plan = m.plan(*GPU_SETS)
    power = plan.get("gpu.power_limit", {})
    targets = power.get("targets", [])
    check(rc == 1 and len(targets) == 8 and targets[0]["path"] == "nvml:0000:18:00.0/power_limit"
          and targets[0]["current"] == "700 W" and targets[0]["wanted"] == "600 W",
          "plan: one power-limit target per GPU, 700 W -> 600 W (%s)" % targets[:1])
    clocks = plan.get("gpu.app_clocks", {}).get("targets", [{}])
    check(clocks[0].get("wanted") == "memory 2619 MHz, graphics 1980 MHz"
          and clocks[0].get("current") == "memory 2619 MHz, graphics 1755 MHz",
          "plan: app clocks max is the highest supported pair (%s)" % clocks[:1])
    rc, plan = m.plan("--profile", "none", "--set", "gpu.power_limit=900")
    t = plan.get("gpu.power_limit", {}).get("targets", [{}])[0]
    check(t.get("need") == "cannot" and "takes 200 W to 700 W, not 900 W" in t.get("reason", ""),
          "a power limit above the GPU's maximum: cannot (%s)" % t.get("reason"))
    rc, plan = m.plan("--profile", "none", "--set", "gpu.power_limit=max", "--set", "gpu.persistence=on")
    check(rc == 0 and plan.get("gpu.power_limit", {}).get("state") == "ok", "power limit max = 700 W: nothing to do")
    p = m.tune("plan", "--profile", "none", "--set", "gpu.power_limit=fast")
    check(p.returncode == 2 and 'gpu.power_limit="fast": expected default|max|min|WATTS' in p.stderr,
          "a bad power value is refused: " + p.stderr.strip())


def round_trip(m):
    before = m.query()
    check(before.count("\n") == 8 and "Enabled" in before, "query reads the 8 fake GPUs:\n" + before[:200])
    p = m.tune("apply", *GPU_SETS)
    check(p.returncode == 0 and "24 values set, 0 refused by this machine, 0 did not take" in p.stdout,
          "apply sets 24 GPU values: " + p.stdout.strip()[-200:])
    during = m.query()
    check("Disabled, 600.00 W, 600.00 W, 2619 MHz, 1980 MHz" in during, "query sees them set:\n" + during[:120])
    p = m.tune("status", "--json")
    doc = json.loads(p.stdout) if p.stdout else {}
    check(p.returncode == 0 and doc.get("drifted") == 0 and len(doc.get("entries", [])) == 24,
          "status (another process): 24 held")
    p = m.tune("revert")
    check(p.returncode == 0 and m.query() == before and not m.files_changed(),
          "revert restores every GPU as query sees it, and every file")


def killed(m):
    before = m.query()
    # 1 the snapshot, 2..25 the 24 writes, 26 the checks.
    for n in (1, 2, 9, 25, 26):
        k = m.tune("apply", *GPU_SETS, extra={"GPUVET_TUNE_STOP_AFTER": str(n)})
        r = m.tune("revert")
        check(k.returncode == -9 and r.returncode == 0 and m.query() == before and not m.files_changed(),
              "apply killed after step %d, revert: GPUs and files as before (%s)" % (n, r.stdout.strip()[-120:]))
        m.tune("apply", *GPU_SETS, extra={"GPUVET_TUNE_STOP_AFTER": str(n)})
        a = m.tune("apply", *GPU_SETS)
        check(a.returncode == 0 and "0 did not take" in a.stdout, "killed after step %d, apply again completes" % n)
        m.tune("revert")
    check(m.query() == before, "and the last revert leaves the GPUs as before")


def refused(gpuvet, lib, work):
    m = Machine(gpuvet, lib, work, "gpu-refused", "fault nvmlDeviceSetPowerManagementLimit 3 NO_PERMISSION\n")
    before = m.query()
    p = m.tune("apply", *GPU_SETS)
    check(p.returncode == 0 and "refused" in p.stdout and "Insufficient Permissions" in p.stdout
          and "23 values set, 1 refused by this machine" in p.stdout,
          "NVML refusing one GPU's power limit: refused, the rest set: " + p.stdout.strip()[-300:])
    p = m.tune("revert")
    check(p.returncode == 0 and m.query() == before, "and revert restores the rest")


def hung(gpuvet, lib, work):
    m = Machine(gpuvet, lib, work, "gpu-hang", "hang nvmlDeviceSetApplicationsClocks 5\n")
    before = m.query()
    start = time.monotonic()
    p = m.tune("apply", *GPU_SETS, "--nvml-call-timeout-ms", "300", timeout=60)
    took = time.monotonic() - start
    check(p.returncode == 1 and "nvmlDeviceSetApplicationsClocks did not return within" in p.stdout
          and "an NVML call never returned" in p.stderr,
          "a setter that hangs: apply gives up, names the call, exits 1 (%d: %s)" % (p.returncode, p.stdout.strip()[-300:]))
    check(took < 30, "and returns promptly (%.1f s)" % took)
    # GPU 5's clocks never changed (the call hung before it set them), so revert, in a new
    # process, writes only what apply changed and never calls the hanging setter.
    r = m.tune("revert", "--nvml-call-timeout-ms", "300", timeout=60)
    check(r.returncode == 0 and m.query() == before, "revert restores what apply set: " + r.stdout.strip()[-200:])


def lost(gpuvet, lib, work):
    m = Machine(gpuvet, lib, work, "gpu-lost", scenario="xid79-lost.scn")
    rc, plan = m.plan(*GPU_SETS)
    targets = plan.get("gpu.power_limit", {}).get("targets", [])
    cannot = [t for t in targets if t["need"] == "cannot"]
    check(len(targets) == 8 and len(cannot) == 1 and "GPU is lost" in cannot[0].get("reason", ""),
          "a GPU that fell off the bus: cannot for it alone (%s)" % [t.get("reason") for t in cannot])


def no_library(gpuvet):
    root = fixture_cache.path("dgx-h100")  # plan only reads
    env = {k: v for k, v in os.environ.items() if k != "GPUVET_NVML_LIB"}
    p = subprocess.run([gpuvet, "tune", "plan", "--root", root, "--profile", "none", "--set", "gpu.persistence=on"],
                       capture_output=True, text=True, env=env, timeout=60)
    check(p.returncode == 0 and "cannot  gpu.persistence=on" in p.stdout and "is not this machine" in p.stdout,
          "under a --root without a named library: cannot, saying why: " + p.stdout.strip()[-200:])
    p = subprocess.run([gpuvet, "tune", "plan", "--root", root, "--profile", "none", "--set", "gpu.persistence=on",
                        "--nvml-lib", "/nonexistent/libnvidia-ml.so.1"], capture_output=True, text=True, env=env,
                       timeout=60)
    check(p.returncode == 0 and "no NVIDIA driver to ask" in p.stdout and "/nonexistent/libnvidia-ml.so.1" in p.stdout,
          "a library that cannot be loaded: cannot, naming it: " + p.stdout.strip()[-200:])


def main():
    global HOOKS
    gpuvet, lib, HOOKS = (os.path.abspath(a) for a in sys.argv[1:4])
    with fixture_cache.scratch(prefix="gpuvet-tune-gpu-") as work:
        m = Machine(gpuvet, lib, work, "gpu")
        plan_judges(m)
        round_trip(m)
        killed(m)
        refused(gpuvet, lib, work)
        hung(gpuvet, lib, work)
        lost(gpuvet, lib, work)
        no_library(gpuvet)
    return finish()


if __name__ == "__main__":
    sys.exit(main())
