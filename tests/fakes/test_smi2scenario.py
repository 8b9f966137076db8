#!/usr/bin/env python3
"""smi2scenario.py: every real capture converts, reproduces the committed
tests/fakes/scenarios/captured-*.scn, agrees with the capture's own --query-gpu CSV, and
loads in the fake; malformed captures give an error naming the line. Stdlib only."""
import csv
import ctypes
import io
import os
import re
import subprocess
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fakeenv  # noqa: E402

fakeenv.ensure_loadable()

TOOL = os.path.join(fakeenv.HERE, "smi2scenario.py")


def captures():
    if not os.path.isdir(fakeenv.REALDATA):
        return []
    return sorted(os.path.join(fakeenv.REALDATA, f) for f in os.listdir(fakeenv.REALDATA)
                  if f.startswith("linux-") and f.endswith(".txt"))


def scenario_name(capture):
    """linux-x86_64__nvidia-h100-mig__590.48.01.txt -> captured-h100-mig.scn"""
    base = os.path.basename(capture)
    return "captured-" + base.split("__nvidia-", 1)[1].split("__", 1)[0] + ".scn"


def convert(path):
    return subprocess.run([sys.executable, TOOL, path], capture_output=True, text=True)


def first_query_gpu(capture):
    """{field: value} of GPU 0 from the capture's first --query-gpu CSV section."""
    with open(capture, encoding="utf-8", errors="replace") as f:
        lines = f.read().splitlines()
    for i, line in enumerate(lines):
        if line.startswith("# $ nvidia-smi --query-gpu="):
            body = [x for x in lines[i + 2:i + 6] if x and not x.startswith("#")]
            rows = list(csv.reader(io.StringIO("\n".join(body)), skipinitialspace=True))
            return {re.sub(r" \[.*\]$", "", k): v for k, v in zip(rows[0], rows[1])}
    return None


class Captures(unittest.TestCase):
    def setUp(self):
        if not captures():
            self.skipTest(f"no captures in {fakeenv.REALDATA}")

    def test_all_five_convert_and_match_committed(self):
        self.assertEqual(len(captures()), 5)
        for cap in captures():
            r = convert(cap)
            self.assertEqual(r.returncode, 0, r.stderr)
            committed = os.path.join(fakeenv.SCENARIOS, scenario_name(cap))
            with open(committed) as f:
                self.assertEqual(r.stdout, f.read(),
                                 f"{committed} is stale: regenerate it with smi2scenario.py {cap}")

    def test_values_agree_with_query_gpu_csv(self):
        for cap in captures():
            q = first_query_gpu(cap)
            self.assertIsNotNone(q, cap)
            g = fakeenv.load_scenario(os.path.join(fakeenv.SCENARIOS, scenario_name(cap)))["gpus"][0]
            self.assertEqual(g["name"], q["name"], cap)
            self.assertEqual(g["uuid"], q["uuid"], cap)
            self.assertEqual(g["pci_bus_id"], q["pci.bus_id"], cap)
            self.assertEqual(fakeenv.to_bytes(g["memory_total"]) >> 20, int(q["memory.total"].split()[0]), cap)
            self.assertEqual(fakeenv.to_int(g["clocks_event_reasons_supported"]),
                             int(q["clocks_event_reasons.supported"], 16), cap)
            for key, field in (("max_clock_sm", "clocks.max.sm"), ("max_clock_memory", "clocks.max.memory"),
                               ("pcie_gen_max", "pcie.link.gen.max"), ("pcie_width_max", "pcie.link.width.max")):
                self.assertEqual(fakeenv.to_int(g[key]), int(q[field].split()[0]), (cap, key))
            self.assertEqual(fakeenv.to_mw(g["power_default_limit"]),
                             round(float(q["power.default_limit"].split()[0]) * 1000), cap)
            for key, field in (("violation_power", "sw_power_cap"), ("violation_sync_boost", "sync_boost"),
                               ("violation_thermal", "sw_thermal_slowdown"),
                               ("violation_hw_thermal", "hw_thermal_slowdown"),
                               ("violation_hw_power_brake", "hw_power_brake_slowdown")):
                us = q["clocks_event_reasons_counters." + field]
                self.assertEqual(fakeenv.to_int(g[key]), int(us.split()[0]) * 1000, (cap, key))
            ecc = q["ecc.errors.uncorrected.volatile.total"]
            if ecc.isdigit():
                self.assertEqual(int(g["ecc_volatile_uncorrected"]), int(ecc), cap)

    def test_fake_loads_every_converted_capture(self):
        lib = ctypes.CDLL(fakeenv.LIB)
        for cap in captures():
            with tempfile.NamedTemporaryFile("w", suffix=".scn", delete=False) as f:
                f.write(convert(cap).stdout)
            try:
                os.environ["FAKE_NVML_SCENARIO"] = f.name
                self.assertEqual(lib.nvmlInit_v2(), 0, cap)
                n = ctypes.c_uint()
                lib.nvmlDeviceGetCount_v2(ctypes.byref(n))
                self.assertEqual(n.value, 1)
                lib.nvmlShutdown()
            finally:
                os.unlink(f.name)

    def test_mig_capture_has_mig_devices(self):
        for cap in captures():
            if "mig" not in cap:
                continue
            with open(os.path.join(fakeenv.SCENARIOS, scenario_name(cap))) as f:
                text = f.read()
            self.assertIn("mig_mode_current = enabled", text)
            self.assertRegex(text, r"\[gpu 0 mig 0\]\nname = NVIDIA H[12]00.* MIG (\dc\.)?\dg\.\d+gb\nuuid = MIG-")


class Plain(unittest.TestCase):
    Q = """
==============NVSMI LOG==============

Driver Version                            : 550.54.15
CUDA Version                              : 12.4

Attached GPUs                             : 1
GPU 00000000:18:00.0
    Product Name                          : NVIDIA H100 80GB HBM3
    Product Brand                         : NVIDIA
    GPU UUID                              : GPU-12345678-1234-1234-1234-123456789abc
    PCI
        Bus Id                            : 00000000:18:00.0
    Fan Speed                             : N/A
    FB Memory Usage
        Total                             : 81559 MiB
        Reserved                          : 479 MiB
        Used                              : 3 MiB
        Free                              : 81077 MiB
    ECC Errors
        Volatile
            Single Bit
                Device Memory             : 1
                Total                     : 4
            Double Bit
                Device Memory             : 0
                Total                     : 2
    Temperature
        GPU Current Temp                  : 35 C
        GPU Shutdown Temp                 : 92 C
    GPU Power Readings
        Power Draw                        : 70.12 W
    Processes
        GPU instance ID                   : N/A
        Compute instance ID               : N/A
        Process ID                        : 4242
            Type                          : C
            Name                          : python3 train.py
            Used GPU Memory               : 2048 MiB
"""

    def run_tool(self, text):
        with tempfile.NamedTemporaryFile("w", suffix=".txt", delete=False) as f:
            f.write(text)
        try:
            return convert(f.name), f.name
        finally:
            os.unlink(f.name)

    def test_plain_q_output(self):
        r, _ = self.run_tool(self.Q)
        self.assertEqual(r.returncode, 0, r.stderr)
        out = r.stdout
        for want in ("driver_version = 550.54.15", "cuda_driver_version = 12.4", "[gpu 0]",
                     "memory_used = 3 MiB", "ecc_volatile_corrected = 4", "ecc_volatile_uncorrected = 2",
                     "temperature = 35 C", "temperature_shutdown = 92 C", "power_usage = 70.12 W",
                     "process = 4242 2048MiB python3 train.py"):
            self.assertIn(want, out.splitlines())
        self.assertNotIn("fan_speed", out)

    def test_no_gpu_section(self):
        r, name = self.run_tool("==============NVSMI LOG==============\n\nDriver Version : 550.54.15\n")
        self.assertEqual(r.returncode, 1)
        self.assertIn(f"smi2scenario: {name}:1: no GPU section", r.stderr)

    def test_unparseable_value(self):
        text = self.Q.replace("GPU Current Temp                  : 35 C", "GPU Current Temp                  : warm")
        r, name = self.run_tool(text)
        self.assertEqual(r.returncode, 1)
        line = text.splitlines().index("        GPU Current Temp                  : warm") + 1
        self.assertIn(f"smi2scenario: {name}:{line}: 'GPU Current Temp': cannot parse value 'warm'", r.stderr)

    def test_bad_memory_unit(self):
        r, name = self.run_tool(self.Q.replace("Used                              : 3 MiB",
                                               "Used                              : 3 parsecs"))
        self.assertEqual(r.returncode, 1)
        self.assertRegex(r.stderr, rf"smi2scenario: {re.escape(name)}:\d+: 'Used': cannot parse value '3 parsecs'")

    # Labels as older drivers spell them (4xx: "Ecc Mode", "Gpu" utilization, "Clocks
    # Throttle Reasons") or in another case: the converter must read them all alike.
    OLD_LABELS = [("    ECC Mode\n", "    Ecc Mode\n"), ("        GPU       ", "        Gpu       "),
                  ("Clocks Event Reasons\n", "Clocks Throttle Reasons\n"), ("Persistence Mode", "persistence mode"),
                  ("FB Memory Usage", "Fb Memory Usage"), ("Remapped Rows", "Remapped rows")]

    def test_older_label_spellings(self):
        q = os.path.join(fakeenv.HERE, "..", "captures", "h100-sxm-vm-580", "nvidia-smi-q.txt")
        text = open(q).read()
        want = convert(q)
        self.assertEqual(want.returncode, 0, want.stderr)
        old = text
        for new_label, old_label in self.OLD_LABELS:
            self.assertIn(new_label, old, "the capture has no %r to respell" % new_label)
            old = old.replace(new_label, old_label)
        got, _ = self.run_tool(old)
        self.assertEqual(got.returncode, 0, got.stderr)
        body = lambda out: [l for l in out.splitlines() if not l.startswith("# Converted")]  # noqa: E731
        self.assertEqual(body(got.stdout), body(want.stdout))
        self.assertIn("ecc_mode_current = enabled", got.stdout.splitlines())

    # Labels nvidia-smi prints that the converter once refused, dropped or misread. Each
    # test is one label; the sections are as real captures print them (tests/fakes/SOURCES.md).
    FABRIC = """    Fabric
        State                                          : Completed
        Status                                         : Insufficient Resources
        CliqueId                                       : 0
        ClusterUUID                                    : 00000000-0000-0000-0000-000000000000
"""

    def test_fabric_status_insufficient_resources(self):
        r, _ = self.run_tool(self.Q + self.FABRIC)
        self.assertEqual(r.returncode, 0, r.stderr)
        lines = r.stdout.splitlines()
        self.assertIn("fabric_state = completed", lines)
        self.assertIn("fabric_status = NVML_ERROR_INSUFFICIENT_RESOURCES", lines)
        self.assertIn("fabric_clique_id = 0", lines)
        self.assertIn("fabric_cluster_uuid = 00000000-0000-0000-0000-000000000000", lines)

    def test_gpu_recovery_action(self):
        # nvidia-smi's words for NVML's nvmlGpuRecoveryAction_t (NVIDIA's "Error Recovery
        # and Response Flags": None, Reset, Reboot, Drain P2P, Drain and Reset).
        for label, number in (("None", 0), ("Reset", 1), ("Reboot", 2), ("Drain P2P", 3), ("Drain and Reset", 4)):
            text = self.Q.replace("    Fan Speed ", f"    GPU Recovery Action                   : {label}\n    Fan Speed ")
            r, _ = self.run_tool(text)
            self.assertEqual(r.returncode, 0, r.stderr)
            self.assertIn(f"recovery_action = {number}", r.stdout.splitlines(), label)
        r, name = self.run_tool(self.Q.replace("    Fan Speed ", "    GPU Recovery Action                   : Sing\n"
                                                                  "    Fan Speed "))
        self.assertEqual(r.returncode, 1)
        self.assertIn("'GPU Recovery Action': cannot parse value 'Sing'", r.stderr)

    HISTOGRAM = """    Remapped Rows
        Correctable Error                              : 0
        Uncorrectable Error                            : 0
        Pending                                        : No
        Remapping Failure Occurred                     : No
        Bank Remap Availability Histogram
            Max                                        : 2559 bank(s)
            High                                       : 1 bank(s)
            Partial                                    : 0 bank(s)
            Low                                        : 0 bank(s)
            None                                       : 0 bank(s)
"""

    def test_row_remapper_histogram(self):
        r, _ = self.run_tool(self.Q + self.HISTOGRAM)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("remapper_histogram = 2559,1,0,0,0", r.stdout.splitlines())
        # and the fake answers it as NVML would
        lib = ctypes.CDLL(fakeenv.LIB)
        with tempfile.NamedTemporaryFile("w", suffix=".scn", delete=False) as f:
            f.write(r.stdout)
        try:
            os.environ["FAKE_NVML_SCENARIO"] = f.name
            self.assertEqual(lib.nvmlInit_v2(), 0)
            dev = ctypes.c_void_p()
            self.assertEqual(lib.nvmlDeviceGetHandleByIndex_v2(0, ctypes.byref(dev)), 0)
            hist = (ctypes.c_uint * 5)()
            self.assertEqual(lib.nvmlDeviceGetRowRemapperHistogram(dev, hist), 0)
            self.assertEqual(list(hist), [2559, 1, 0, 0, 0])
            lib.nvmlShutdown()
        finally:
            os.unlink(f.name)
        partial = self.HISTOGRAM.replace("            None                                       : 0 bank(s)\n", "")
        r, _ = self.run_tool(self.Q + partial)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertNotIn("remapper_histogram", r.stdout, "four of five buckets are not NVML's answer")

    def test_unknown_error_is_an_error_not_unsupported(self):
        # nvmlErrorString(NVML_ERROR_UNKNOWN) is "Unknown Error": the call failed, it is
        # not a reading the GPU lacks.
        text = self.Q.replace("GPU Current Temp                  : 35 C", "GPU Current Temp                  : Unknown Error")
        r, _ = self.run_tool(text)
        self.assertEqual(r.returncode, 0, r.stderr)
        lines = r.stdout.splitlines()
        self.assertNotIn("temperature = 35 C", lines)
        self.assertIn("fault nvmlDeviceGetTemperature 0 NVML_ERROR_UNKNOWN", lines)
        text = self.Q.replace("        Used                              : 3 MiB", "        Used                              : Unknown Error")
        r, _ = self.run_tool(text)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("fault nvmlDeviceGetMemoryInfo_v2 0 NVML_ERROR_UNKNOWN", r.stdout.splitlines())
        # a label whose failure a scenario cannot express is refused, naming the line
        text = self.Q.replace("    Fan Speed ", "    GPU Recovery Action                   : Unknown Error\n    Fan Speed ")
        r, name = self.run_tool(text)
        self.assertEqual(r.returncode, 1)
        self.assertRegex(r.stderr, rf"smi2scenario: {re.escape(name)}:\d+: 'GPU Recovery Action': nvidia-smi printed "
                                   r"'Unknown Error' \(NVML_ERROR_UNKNOWN\)")

    def test_missing_file(self):
        r = convert("/nonexistent/capture.txt")
        self.assertEqual(r.returncode, 1)
        self.assertIn("/nonexistent/capture.txt", r.stderr)


if __name__ == "__main__":
    unittest.main(verbosity=2)
