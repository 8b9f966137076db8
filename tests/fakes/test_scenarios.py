#!/usr/bin/env python3
"""Independent clients against the fake: pynvml (nvidia-ml-py) with every scenario reports
what the scenario says (this proves the fake's ABI is NVML's: pynvml declares NVML's
structs itself), and gpustat --json and nvitop show the h100 scenario's values.
The clients live in a venv under the build dir, created here if absent (exit 77 if PyPI
cannot be reached). Stdlib only besides the clients."""
import json
import os
import subprocess
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fakeenv  # noqa: E402

PY = fakeenv.venv_python()
H100 = os.path.join(fakeenv.SCENARIOS, "h100-sxm-8gpu.scn")

# Dumps, per GPU, every value pynvml gives (or the NVML error's value).
DUMP = r"""
import json, pynvml as N
def q(f, *a, **k):
    try:
        return f(*a, **k)
    except N.NVMLError as e:
        return {"error": e.value}
try:
    N.nvmlInit()
except N.NVMLError as e:
    print(json.dumps({"init_error": e.value})); raise SystemExit
out = {"driver": q(N.nvmlSystemGetDriverVersion), "cuda": q(N.nvmlSystemGetCudaDriverVersion_v2), "gpus": []}
for i in range(N.nvmlDeviceGetCount()):
    h = q(N.nvmlDeviceGetHandleByIndex, i)
    if isinstance(h, dict):
        out["gpus"].append({"handle": h}); continue
    g = {}
    g["name"] = q(N.nvmlDeviceGetName, h)
    g["uuid"] = q(N.nvmlDeviceGetUUID, h)
    pci = q(N.nvmlDeviceGetPciInfo, h)
    g["pci_bus_id"] = pci if isinstance(pci, dict) else pci.busId
    m = q(N.nvmlDeviceGetMemoryInfo, h, version=N.nvmlMemory_v2)
    g["memory"] = m if isinstance(m, dict) else [m.total, m.reserved, m.used, m.free]
    m1 = q(N.nvmlDeviceGetMemoryInfo, h)
    g["memory_v1"] = m1 if isinstance(m1, dict) else [m1.total, m1.free]
    g["temperature"] = q(N.nvmlDeviceGetTemperature, h, N.NVML_TEMPERATURE_GPU)
    g["temperature_slowdown"] = q(N.nvmlDeviceGetTemperatureThreshold, h, N.NVML_TEMPERATURE_THRESHOLD_SLOWDOWN)
    g["power_usage"] = q(N.nvmlDeviceGetPowerUsage, h)
    g["power_limit"] = q(N.nvmlDeviceGetPowerManagementLimit, h)
    g["power_enforced_limit"] = q(N.nvmlDeviceGetEnforcedPowerLimit, h)
    for n, t in (("graphics", N.NVML_CLOCK_GRAPHICS), ("sm", N.NVML_CLOCK_SM), ("memory", N.NVML_CLOCK_MEM),
                 ("video", N.NVML_CLOCK_VIDEO)):
        g["clock_" + n] = q(N.nvmlDeviceGetClockInfo, h, t)
        g["max_clock_" + n] = q(N.nvmlDeviceGetMaxClockInfo, h, t)
    g["clocks_event_reasons"] = q(N.nvmlDeviceGetCurrentClocksEventReasons, h)
    for key, pol in (("violation_power", N.NVML_PERF_POLICY_POWER), ("violation_thermal", N.NVML_PERF_POLICY_THERMAL),
                     ("violation_sync_boost", N.NVML_PERF_POLICY_SYNC_BOOST),
                     ("violation_board_limit", N.NVML_PERF_POLICY_BOARD_LIMIT),
                     ("violation_low_utilization", N.NVML_PERF_POLICY_LOW_UTILIZATION),
                     ("violation_reliability", N.NVML_PERF_POLICY_RELIABILITY),
                     ("violation_total_base_clocks", N.NVML_PERF_POLICY_TOTAL_BASE_CLOCKS)):
        v = q(N.nvmlDeviceGetViolationStatus, h, pol)
        g[key] = v if isinstance(v, dict) else v.violationTime
    g["ecc_volatile_uncorrected"] = q(N.nvmlDeviceGetTotalEccErrors, h, N.NVML_MEMORY_ERROR_TYPE_UNCORRECTED,
                                      N.NVML_VOLATILE_ECC)
    g["pcie_gen_current"] = q(N.nvmlDeviceGetCurrPcieLinkGeneration, h)
    g["pcie_width_current"] = q(N.nvmlDeviceGetCurrPcieLinkWidth, h)
    g["cuda_compute_capability"] = q(N.nvmlDeviceGetCudaComputeCapability, h)
    g["fan_speed"] = q(N.nvmlDeviceGetFanSpeed, h)
    procs = q(N.nvmlDeviceGetComputeRunningProcesses, h)
    g["processes"] = procs if isinstance(procs, dict) else [[p.pid, p.usedGpuMemory] for p in procs]
    out["gpus"].append(g)
N.nvmlShutdown()
print(json.dumps(out))
"""

NOT_SUPPORTED, LOST = 3, 15


def run(args, scenario, timeout=120):
    r = subprocess.run([PY] + args, env=fakeenv.run_env(scenario), capture_output=True, text=True,
                       errors="replace", timeout=timeout)
    return r


def expect_num(g, key, conv):
    return conv(g[key]) if key in g else {"error": NOT_SUPPORTED}


class Pynvml(unittest.TestCase):
    def check_scenario(self, path):
        name = os.path.basename(path)
        r = run(["-c", DUMP], path)
        self.assertEqual(r.returncode, 0, f"{name}: {r.stderr}")
        got = json.loads(r.stdout)
        if fakeenv.init_error(path):
            self.assertEqual(got, {"init_error": fakeenv.init_error(path)})
            return
        sc = fakeenv.load_scenario(path)
        self.assertEqual(got["driver"], sc["global"]["driver_version"], name)
        self.assertEqual(len(got["gpus"]), len(sc["gpus"]), name)
        for i, g in sorted(sc["gpus"].items()):
            d = got["gpus"][i]
            where = f"{name} GPU {i}"
            if g.get("lost") == "1":
                self.assertEqual(d["name"], {"error": LOST}, where)
                self.assertEqual(d["power_usage"], {"error": LOST}, where)
                continue
            self.assertEqual(d["name"], g["name"], where)
            self.assertEqual(d["uuid"], g["uuid"], where)
            self.assertEqual(d["pci_bus_id"], g["pci_bus_id"], where)
            total = fakeenv.to_bytes(g["memory_total"])
            reserved = fakeenv.to_bytes(g.get("memory_reserved", "0"))
            used = fakeenv.to_bytes(g["memory_used"])
            free = fakeenv.to_bytes(g["memory_free"])
            self.assertEqual(d["memory"], [total, reserved, used, free], where)
            self.assertEqual(d["memory_v1"], [total, free], where)
            self.assertEqual(d["temperature"], expect_num(g, "temperature", fakeenv.to_int), where)
            self.assertEqual(d["temperature_slowdown"], expect_num(g, "temperature_slowdown", fakeenv.to_int), where)
            for key in ("power_usage", "power_limit", "power_enforced_limit"):
                self.assertEqual(d[key], expect_num(g, key, fakeenv.to_mw), (where, key))
            for n in ("graphics", "sm", "memory", "video"):
                for key in ("clock_" + n, "max_clock_" + n):
                    self.assertEqual(d[key], expect_num(g, key, fakeenv.to_int), (where, key))
            for key in ("clocks_event_reasons", "ecc_volatile_uncorrected", "pcie_gen_current", "pcie_width_current",
                        "fan_speed"):
                self.assertEqual(d[key], expect_num(g, key, fakeenv.to_int), (where, key))
            for key in ("violation_power", "violation_thermal", "violation_sync_boost", "violation_board_limit",
                        "violation_low_utilization", "violation_reliability", "violation_total_base_clocks"):
                self.assertEqual(d[key], expect_num(g, key, fakeenv.to_int), (where, key))
            if "cuda_compute_capability" in g:
                self.assertEqual(d["cuda_compute_capability"],
                                 [int(x) for x in g["cuda_compute_capability"].split(".")], where)
            if "process" in g:  # the reader keeps the last process line only
                pid = int(g["process"].split()[0])
                self.assertIn(pid, [p[0] for p in d["processes"]], where)
            else:
                self.assertEqual(d["processes"], [], where)

    def test_every_scenario(self):
        for path in fakeenv.scenario_files():
            if fakeenv.hangs(path):
                continue  # a call never returns: hang.scn has its own test
            with self.subTest(scenario=os.path.basename(path)):
                self.check_scenario(path)

    def test_hang_scenario_is_not_called_here(self):
        # the DUMP reads power usage, which hangs on GPU 3 in hang.scn: it must time out
        path = os.path.join(fakeenv.SCENARIOS, "hang.scn")
        with self.assertRaises(subprocess.TimeoutExpired):
            run(["-c", DUMP], path, timeout=5)


class WithProcess(unittest.TestCase):
    """gpustat and nvitop look the PIDs up on the host: give them a real one."""

    @classmethod
    def setUpClass(cls):
        cls.sleeper = subprocess.Popen(["sleep", "300"])
        cls.scn = tempfile.NamedTemporaryFile("w", suffix=".scn", delete=False)
        cls.scn.write(f"include {H100}\n[gpu 4]\nutilization_gpu = 87 %\nmemory_used = 2048 MiB\n"
                      f"memory_free = 79032 MiB\ntemperature = 63 C\npower_usage = 401.25 W\n"
                      f"process = {cls.sleeper.pid} 2000MiB sleep\n")
        cls.scn.close()
        cls.sc = fakeenv.load_scenario(cls.scn.name)

    @classmethod
    def tearDownClass(cls):
        cls.sleeper.kill()
        cls.sleeper.wait()
        os.unlink(cls.scn.name)

    def test_gpustat_json(self):
        r = run(["-m", "gpustat", "--json"], self.scn.name)
        self.assertEqual(r.returncode, 0, r.stderr)
        got = json.loads(r.stdout)
        self.assertEqual(got["driver_version"], "550.54.15")
        self.assertEqual(len(got["gpus"]), 8)
        for d in got["gpus"]:
            g = self.sc["gpus"][d["index"]]
            self.assertEqual(d["name"], g["name"])
            self.assertEqual(d["uuid"], g["uuid"])
            self.assertEqual(d["temperature.gpu"], fakeenv.to_int(g["temperature"]))
            self.assertEqual(d["utilization.gpu"], fakeenv.to_int(g["utilization_gpu"]))
            self.assertEqual(d["power.draw"], fakeenv.to_mw(g["power_usage"]) // 1000)
            self.assertEqual(d["enforced.power.limit"], fakeenv.to_mw(g["power_enforced_limit"]) // 1000)
            self.assertEqual(d["memory.total"], fakeenv.to_bytes(g["memory_total"]) >> 20)
            self.assertEqual(d["memory.used"], fakeenv.to_bytes(g["memory_used"]) >> 20)
            self.assertIsNone(d["fan.speed"])  # SXM modules have no fan: NOT_SUPPORTED
        procs = got["gpus"][4]["processes"]
        self.assertEqual([(p["pid"], p["gpu_memory_usage"]) for p in procs], [(self.sleeper.pid, 2000)])

    def test_nvitop_api(self):
        code = r"""
import json
from nvitop import Device
out = []
for d in Device.all():
    out.append({"name": d.name(), "uuid": d.uuid(), "bus_id": d.bus_id(), "memory_total": d.memory_total(),
                "memory_used": d.memory_used(), "temperature": d.temperature(), "power_usage": d.power_usage(),
                "power_limit": d.power_limit(), "sm_clock": d.sm_clock(), "memory_clock": d.memory_clock(),
                "gpu_utilization": d.gpu_utilization(), "persistence_mode": d.persistence_mode(),
                "pids": sorted(d.processes().keys())})
print(json.dumps(out))
"""
        r = run(["-c", code], self.scn.name)
        self.assertEqual(r.returncode, 0, r.stderr)
        got = json.loads(r.stdout)
        self.assertEqual(len(got), 8)
        for i, d in enumerate(got):
            g = self.sc["gpus"][i]
            self.assertEqual(d["name"], g["name"])
            self.assertEqual(d["uuid"], g["uuid"])
            self.assertEqual(d["bus_id"], g["pci_bus_id"])
            self.assertEqual(d["memory_total"], fakeenv.to_bytes(g["memory_total"]))
            self.assertEqual(d["memory_used"], fakeenv.to_bytes(g["memory_used"]))
            self.assertEqual(d["temperature"], fakeenv.to_int(g["temperature"]))
            self.assertEqual(d["power_usage"], fakeenv.to_mw(g["power_usage"]))
            self.assertEqual(d["power_limit"], fakeenv.to_mw(g["power_limit"]))
            self.assertEqual(d["sm_clock"], fakeenv.to_int(g["clock_sm"]))
            self.assertEqual(d["memory_clock"], fakeenv.to_int(g["clock_memory"]))
            self.assertEqual(d["gpu_utilization"], fakeenv.to_int(g["utilization_gpu"]))
            self.assertEqual(d["persistence_mode"], "Enabled")
        self.assertEqual(got[4]["pids"], [self.sleeper.pid])

    def test_nvitop_once(self):
        r = run(["-m", "nvitop", "--once"], self.scn.name)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("Driver Version: 550.54.15", r.stdout)
        self.assertIn("CUDA Driver Version: 12.4", r.stdout)
        for g in self.sc["gpus"].values():
            self.assertIn(g["pci_bus_id"], r.stdout)
        self.assertEqual(r.stdout.count("H100 80GB HBM3"), 8)
        self.assertIn("63C", r.stdout)
        self.assertIn("401W / 700W", r.stdout)

    def test_nvitop_mig(self):
        r = run(["-m", "nvitop", "--once"], os.path.join(fakeenv.SCENARIOS, "mig-enabled.scn"))
        self.assertEqual(r.returncode, 0, r.stderr)
        for want in ("3g.40gb @ GI/CI: 2/0", "2g.20gb @ GI/CI: 3/0", "1g.10gb @ GI/CI: 9/0", "1g.10gb @ GI/CI:10/0"):
            self.assertIn(want, r.stdout)


if __name__ == "__main__":
    unittest.main(verbosity=2)
