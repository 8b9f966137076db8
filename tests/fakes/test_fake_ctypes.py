#!/usr/bin/env python3
"""The fake NVML through ctypes: exports, argument and handle checks, scenarios, faults,
hangs, latencies, events, thread safety, malformed scenario files. Stdlib only."""
import ctypes
import os
import re
import subprocess
import sys
import tempfile
import threading
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fakeenv  # noqa: E402

fakeenv.ensure_loadable()

SUCCESS, UNINIT, INVALID, NOT_SUPPORTED, INSUFFICIENT, TIMEOUT, LOST, UNKNOWN = 0, 1, 2, 3, 7, 10, 15, 999
DEF = os.path.join(fakeenv.SRC_ROOT, "src", "bindings", "nvml_functions.def")


def def_functions():
    """[(name, [param declarations])] from nvml_functions.def."""
    with open(DEF) as f:
        text = re.sub(r"/\*.*?\*/", "", f.read(), flags=re.S)
    out = []
    for m in re.finditer(r"NVML_FN\(\s*\d\s*,\s*(\w+)\s*,\s*\((.*?)\)\s*\)", text, re.S):
        params = [p.strip() for p in " ".join(m.group(2).split()).split(",")]
        out.append((m.group(1), [] if params == ["void"] else params))
    return out


def ctype_of(param):
    if "*" in param or param.split()[0] in ("nvmlDevice_t", "nvmlEventSet_t", "nvmlGpmSample_t"):
        return ctypes.c_void_p
    if "long long" in param:
        return ctypes.c_ulonglong
    if param.startswith("int "):
        return ctypes.c_int
    return ctypes.c_uint


class Fake:
    """The library loaded once; each init reads $FAKE_NVML_SCENARIO anew."""
    lib = ctypes.CDLL(fakeenv.LIB)
    lib.nvmlErrorString.restype = ctypes.c_char_p
    for name, params in def_functions():
        fn = getattr(lib, name)
        fn.restype = ctypes.c_int
        fn.argtypes = [ctype_of(p) for p in params]

    def __init__(self, scenario):
        self.scenario = scenario

    def __enter__(self):
        os.environ["FAKE_NVML_SCENARIO"] = self.scenario
        r = self.lib.nvmlInit_v2()
        if r != SUCCESS:
            raise AssertionError(f"nvmlInit_v2 on {self.scenario}: {r}")
        return self

    def __exit__(self, *exc):
        self.lib.nvmlShutdown()

    def handle(self, i):
        h = ctypes.c_void_p()
        r = self.lib.nvmlDeviceGetHandleByIndex_v2(i, ctypes.byref(h))
        assert r == SUCCESS, r
        return h

    def u32(self, fn, h, *args):
        v = ctypes.c_uint()
        r = getattr(self.lib, fn)(h, *args, ctypes.byref(v))
        return r, v.value

    def u64(self, fn, h, *args):
        v = ctypes.c_ulonglong()
        r = getattr(self.lib, fn)(h, *args, ctypes.byref(v))
        return r, v.value


class GpmMetric(ctypes.Structure):
    _fields_ = [("metricId", ctypes.c_uint), ("nvmlReturn", ctypes.c_int), ("value", ctypes.c_double),
                ("shortName", ctypes.c_char_p), ("longName", ctypes.c_char_p), ("unit", ctypes.c_char_p)]


class GpmMetricsGet(ctypes.Structure):
    """nvmlGpmMetricsGet_t with R525's 98 metrics: a client built against an older header."""
    _fields_ = [("version", ctypes.c_uint), ("numMetrics", ctypes.c_uint), ("sample1", ctypes.c_void_p),
                ("sample2", ctypes.c_void_p), ("metrics", GpmMetric * 98)]


class FieldValue(ctypes.Structure):
    """nvmlFieldValue_t; the value union read as its widest member."""
    _fields_ = [("fieldId", ctypes.c_uint), ("scopeId", ctypes.c_uint), ("timestamp", ctypes.c_longlong),
                ("latencyUsec", ctypes.c_longlong), ("valueType", ctypes.c_int), ("nvmlReturn", ctypes.c_int),
                ("value", ctypes.c_ulonglong)]


def field_values(f, h, *fields):
    """[(nvmlReturn, value)] for (fieldId, scopeId) pairs (or bare field ids), in one call; the
    value of an unsigned int (valueType 1) cut to 32 bits."""
    pairs = [x if isinstance(x, tuple) else (x, 0) for x in fields]
    arr = (FieldValue * len(pairs))()
    for v, (fid, scope) in zip(arr, pairs):
        v.fieldId, v.scopeId = fid, scope
    r = f.lib.nvmlDeviceGetFieldValues(h, len(pairs), ctypes.cast(arr, ctypes.c_void_p))
    assert r == SUCCESS, r
    return [(v.nvmlReturn, v.value & 0xffffffff if v.valueType == 1 else v.value) for v in arr]


# The health fields (nvml.h): ECC totals SBE/DBE volatile/aggregate, DBE in device memory
# volatile/aggregate, retired pages SBE/DBE/pending, PCIe replays, remapped rows
# correctable/uncorrectable/pending/failure, power limits min/max/default/current.
ECC_TOTALS = (3, 4, 5, 6)
ECC_DEV = (12, 23)
RETIRED = (29, 30, 31)
PCIE_REPLAY = 94
REMAPPED = (142, 143, 144, 145)
POWER_LIMITS = (187, 188, 189, 190)


def scn(name):
    return os.path.join(fakeenv.SCENARIOS, name)


def write_scenario(text, directory=None):
    f = tempfile.NamedTemporaryFile("w", suffix=".scn", delete=False, dir=directory)
    f.write(text)
    f.close()
    return f.name


def init_in_subprocess(path, timeout=30):
    code = ("import ctypes,sys; l=ctypes.CDLL(sys.argv[1]); r=l.nvmlInit_v2(); print('rc', r); "
            "r == 0 and l.nvmlShutdown()")
    env = fakeenv.run_env(path)
    return subprocess.run([sys.executable, "-c", code, fakeenv.LIB], env=env, capture_output=True, text=True,
                          errors="replace", timeout=timeout)


class Exports(unittest.TestCase):
    def test_every_def_function_is_exported(self):
        names = [n for n, _ in def_functions()]
        self.assertGreater(len(names), 60)
        for n in names + ["nvmlErrorString", "nvmlInit", "nvmlInitWithFlags"]:
            self.assertTrue(hasattr(Fake.lib, n), n)

    def test_error_strings(self):
        self.assertEqual(Fake.lib.nvmlErrorString(LOST), b"GPU is lost")
        self.assertEqual(Fake.lib.nvmlErrorString(12345), b"Unknown Error")

    def test_uninitialized(self):
        n = ctypes.c_uint()
        self.assertEqual(Fake.lib.nvmlDeviceGetCount_v2(ctypes.byref(n)), UNINIT)
        self.assertEqual(Fake.lib.nvmlShutdown(), UNINIT)


class Arguments(unittest.TestCase):
    """NULL pointers and foreign handles give INVALID_ARGUMENT from every function."""

    def call_all(self, f, handle, pointer):
        results = {}
        for name, params in def_functions():
            if name in ("nvmlInit_v2", "nvmlShutdown"):
                continue
            args = []
            for p in params:
                if p.startswith("nvmlDevice_t ") and "*" not in p:
                    args.append(handle)
                elif "*" in p or p.startswith("nvmlEventSet_t"):
                    args.append(pointer() if pointer else None)
                else:
                    args.append(0)
            if name == "nvmlEventSetWait_v2":
                args[-1] = 0
            results[name] = getattr(f.lib, name)(*args)
        return results

    def test_null_pointers(self):
        with Fake(scn("h100-sxm-8gpu.scn")) as f:
            h = f.handle(0)
            takes_pointer = {name for name, params in def_functions()
                             if any("*" in p or p.startswith("nvmlEventSet_t") for p in params)}
            for name, r in self.call_all(f, h, None).items():
                if name in takes_pointer:  # nvmlDeviceValidateInforom has nothing to be NULL
                    self.assertEqual(r, INVALID, name)

    def test_foreign_handles(self):
        buf = ctypes.create_string_buffer(4096)
        keep = []  # the output buffers must outlive the calls

        def out_buffer():
            keep.append(ctypes.create_string_buffer(4096))
            return ctypes.addressof(keep[-1])
        with Fake(scn("h100-sxm-8gpu.scn")) as f:
            for bogus in (ctypes.c_void_p(0x1234), ctypes.c_void_p(ctypes.addressof(buf)), ctypes.c_void_p(0)):
                results = self.call_all(f, bogus, out_buffer)
                for name, params in def_functions():
                    if name in results and any(p.startswith("nvmlDevice_t ") and "*" not in p for p in params):
                        self.assertEqual(results[name], INVALID, name)

    def test_handle_of_undefined_mig_device(self):
        with Fake(scn("h100-sxm-8gpu.scn")) as f:
            h = f.handle(0)
            mig = ctypes.c_void_p(h.value + 1)  # the slot next to GPU 0 is its MIG device 0
            self.assertEqual(f.u32("nvmlDeviceGetPowerUsage", mig)[0], INVALID)

    def test_small_buffer(self):
        with Fake(scn("h100-sxm-8gpu.scn")) as f:
            buf = ctypes.create_string_buffer(96)
            self.assertEqual(f.lib.nvmlDeviceGetName(f.handle(0), buf, 5), INSUFFICIENT)
            self.assertEqual(f.lib.nvmlDeviceGetName(f.handle(0), buf, 96), SUCCESS)
            self.assertEqual(buf.value, b"NVIDIA H100 80GB HBM3")

    def test_index_out_of_range(self):
        with Fake(scn("h100-sxm-8gpu.scn")) as f:
            h = ctypes.c_void_p()
            self.assertEqual(f.lib.nvmlDeviceGetHandleByIndex_v2(8, ctypes.byref(h)), INVALID)


class Scenarios(unittest.TestCase):
    def test_every_scenario_loads(self):
        for path in fakeenv.scenario_files():
            name = os.path.basename(path)
            os.environ["FAKE_NVML_SCENARIO"] = path
            r = Fake.lib.nvmlInit_v2()
            self.assertEqual(r, fakeenv.init_error(path), name)
            if r == SUCCESS:
                n = ctypes.c_uint()
                self.assertEqual(Fake.lib.nvmlDeviceGetCount_v2(ctypes.byref(n)), SUCCESS)
                self.assertGreater(n.value, 0, name)
                self.assertEqual(Fake.lib.nvmlShutdown(), SUCCESS)

    def test_h100(self):
        with Fake(scn("h100-sxm-8gpu.scn")) as f:
            buf = ctypes.create_string_buffer(80)
            self.assertEqual(f.lib.nvmlSystemGetDriverVersion(buf, 80), SUCCESS)
            self.assertEqual(buf.value, b"550.54.15")
            v = ctypes.c_int()
            self.assertEqual(f.lib.nvmlSystemGetCudaDriverVersion_v2(ctypes.byref(v)), SUCCESS)
            self.assertEqual(v.value, 12040)
            h = f.handle(7)
            self.assertEqual(f.u32("nvmlDeviceGetPowerUsage", h), (SUCCESS, 69620))
            self.assertEqual(f.u32("nvmlDeviceGetTemperatureThreshold", h, 1), (SUCCESS, 89))
            self.assertEqual(f.u32("nvmlDeviceGetFanSpeed", h)[0], NOT_SUPPORTED)
            self.assertEqual(f.u32("nvmlDeviceGetNvLinkState", h, 17), (SUCCESS, 1))
            self.assertEqual(f.u32("nvmlDeviceGetNvLinkState", h, 18)[0], NOT_SUPPORTED)
            self.assertEqual(f.u32("nvmlDeviceGetNvLinkState", h, 36)[0], INVALID)
            self.assertEqual(f.u32("nvmlDeviceGetRetiredPagesPendingStatus", h)[0], NOT_SUPPORTED)
            level = ctypes.c_uint()
            f.lib.nvmlDeviceGetTopologyCommonAncestor(f.handle(0), f.handle(1), ctypes.byref(level))
            self.assertEqual(level.value, 40)  # NODE: same NUMA node
            f.lib.nvmlDeviceGetTopologyCommonAncestor(f.handle(0), f.handle(5), ctypes.byref(level))
            self.assertEqual(level.value, 50)  # SYS
            h2 = ctypes.c_void_p()
            self.assertEqual(f.lib.nvmlDeviceGetHandleByPciBusId_v2(b"0000:db:00.0", ctypes.byref(h2)), SUCCESS)
            self.assertEqual(h2.value, h.value)
            self.assertEqual(f.lib.nvmlDeviceGetHandleByPciBusId_v2(b"0000:dc:00.0", ctypes.byref(h2)), 6)
            self.assertEqual(f.lib.nvmlDeviceGetHandleByPciBusId_v2(b"garbage", ctypes.byref(h2)), INVALID)

    def test_a100_dbe_remap(self):
        with Fake(scn("a100-dbe-remap.scn")) as f:
            h = f.handle(1)
            self.assertEqual(f.u64("nvmlDeviceGetTotalEccErrors", h, 1, 0), (SUCCESS, 1))
            self.assertEqual(f.u64("nvmlDeviceGetTotalEccErrors", f.handle(0), 1, 0), (SUCCESS, 0))
            a, b, c, d = (ctypes.c_uint() for _ in range(4))
            self.assertEqual(f.lib.nvmlDeviceGetRemappedRows(h, *(ctypes.byref(x) for x in (a, b, c, d))), SUCCESS)
            self.assertEqual((a.value, b.value, c.value, d.value), (0, 1, 1, 0))
            es = ctypes.c_void_p()
            self.assertEqual(f.lib.nvmlEventSetCreate(ctypes.byref(es)), SUCCESS)
            self.assertEqual(f.lib.nvmlDeviceRegisterEvents(h, 8, es), SUCCESS)
            data = (ctypes.c_ulonglong * 4)()
            xids = []
            for _ in range(2):
                self.assertEqual(f.lib.nvmlEventSetWait_v2(es, data, 100), SUCCESS)
                self.assertEqual(data[0], h.value)
                self.assertEqual(data[1], 8)
                xids.append(data[2])
            self.assertEqual(xids, [48, 63])
            t0 = time.monotonic()
            self.assertEqual(f.lib.nvmlEventSetWait_v2(es, data, 50), TIMEOUT)
            self.assertGreaterEqual(time.monotonic() - t0, 0.045)
            self.assertEqual(f.lib.nvmlEventSetFree(es), SUCCESS)
            self.assertEqual(f.lib.nvmlEventSetFree(es), INVALID)

    def test_xid79_lost(self):
        with Fake(scn("xid79-lost.scn")) as f:
            h = f.handle(5)
            keep = ctypes.create_string_buffer(4096)
            buf = ctypes.addressof(keep)
            for name, params in def_functions():
                if not params or not params[0].startswith("nvmlDevice_t ") or "*" in params[0]:
                    continue
                if name == "nvmlDeviceRegisterEvents":
                    continue
                args = [h] + [buf if ("*" in p or p.startswith("nvmlDevice_t")) else 0 for p in params[1:]]
                if name == "nvmlDeviceGetTopologyCommonAncestor":
                    args[1] = f.handle(0)
                if name == "nvmlDeviceGetMemoryInfo_v2":
                    ctypes.c_uint.from_address(buf).value = 0x2000028
                self.assertEqual(getattr(f.lib, name)(*args), LOST, name)
            self.assertEqual(f.u32("nvmlDeviceGetPowerUsage", f.handle(4))[0], SUCCESS)
            es = ctypes.c_void_p()
            f.lib.nvmlEventSetCreate(ctypes.byref(es))
            self.assertEqual(f.lib.nvmlDeviceRegisterEvents(h, 8, es), SUCCESS)
            data = (ctypes.c_ulonglong * 4)()
            self.assertEqual(f.lib.nvmlEventSetWait_v2(es, data, 100), SUCCESS)
            self.assertEqual(data[2], 79)
            f.lib.nvmlEventSetFree(es)

    def test_lost_before_start(self):
        path = write_scenario(f"include {scn('h100-sxm-8gpu.scn')}\n[gpu 2]\nlost = 2\n")
        try:
            with Fake(path) as f:
                h = ctypes.c_void_p()
                self.assertEqual(f.lib.nvmlDeviceGetHandleByIndex_v2(2, ctypes.byref(h)), LOST)
                self.assertEqual(f.lib.nvmlDeviceGetHandleByIndex_v2(3, ctypes.byref(h)), SUCCESS)
        finally:
            os.unlink(path)

    def test_nvlink_down(self):
        with Fake(scn("nvlink-down.scn")) as f:
            self.assertEqual(f.u32("nvmlDeviceGetNvLinkState", f.handle(3), 7), (SUCCESS, 0))
            self.assertEqual(f.u32("nvmlDeviceGetNvLinkState", f.handle(3), 6), (SUCCESS, 1))
            self.assertEqual(f.u64("nvmlDeviceGetNvLinkErrorCounter", f.handle(6), 2, 2), (SUCCESS, 1523))
            self.assertEqual(f.u64("nvmlDeviceGetNvLinkErrorCounter", f.handle(6), 2, 5)[0], INVALID)
            pci = ctypes.create_string_buffer(68)
            self.assertEqual(f.lib.nvmlDeviceGetNvLinkRemotePciInfo_v2(f.handle(6), 0, pci), SUCCESS)
            self.assertEqual(pci.raw[36:52], b"00000000:05:00.0")

    def test_thermal(self):
        with Fake(scn("thermal-slowdown.scn")) as f:
            h = f.handle(2)
            self.assertEqual(f.u32("nvmlDeviceGetTemperature", h, 0), (SUCCESS, 91))
            self.assertEqual(f.u64("nvmlDeviceGetCurrentClocksEventReasons", h), (SUCCESS, 0x48))

    def test_mig(self):
        with Fake(scn("mig-enabled.scn")) as f:
            h = f.handle(0)
            cur, pend = ctypes.c_uint(), ctypes.c_uint()
            self.assertEqual(f.lib.nvmlDeviceGetMigMode(h, ctypes.byref(cur), ctypes.byref(pend)), SUCCESS)
            self.assertEqual((cur.value, pend.value), (1, 1))
            mig = ctypes.c_void_p()
            self.assertEqual(f.lib.nvmlDeviceGetMigDeviceHandleByIndex(h, 3, ctypes.byref(mig)), SUCCESS)
            self.assertEqual(f.u32("nvmlDeviceGetGpuInstanceId", mig), (SUCCESS, 10))
            self.assertEqual(f.lib.nvmlDeviceGetMigDeviceHandleByIndex(h, 4, ctypes.byref(mig)), 6)
            self.assertEqual(f.lib.nvmlDeviceGetMigDeviceHandleByIndex(f.handle(1), 0, ctypes.byref(mig)), 6)

    def test_old_driver(self):
        with Fake(scn("old-driver-hopper.scn")) as f:
            buf = ctypes.create_string_buffer(80)
            f.lib.nvmlSystemGetDriverVersion(buf, 80)
            self.assertEqual(buf.value, b"515.65.01")


# The violation fields (ns): policies POWER..RELIABILITY, TOTAL_APP_CLOCKS, TOTAL_BASE_CLOCKS
# (74-81); CUDA 13's reason counters SW thermal, HW thermal, HW power brake (269-271).
VIOL_POLICY_FIELDS = (74, 75, 76, 77, 78, 79, 80, 81)
VIOL_REASON_FIELDS = (269, 270, 271)
VIOL_KEYS = """[gpu 0]
violation_power = 11 ns
violation_thermal = 22 ns
violation_sync_boost = 33 ns
violation_board_limit = 44 ns
violation_low_utilization = 55 ns
violation_reliability = 66 ns
violation_total_base_clocks = 77 ns
violation_hw_thermal = 88 ns
violation_hw_power_brake = 99 ns
"""


class ViolationCounters(unittest.TestCase):
    """nvmlDeviceGetViolationStatus and the violation fields answer the violation_* keys, and
    NOT_SUPPORTED where a scenario lacks them."""

    def status(self, f, h, policy):
        t = (ctypes.c_ulonglong * 2)()
        r = f.lib.nvmlDeviceGetViolationStatus(h, policy, ctypes.cast(t, ctypes.c_void_p))
        return r, t[1], t[0]

    def with_keys(self, extra=""):
        return write_scenario(f"include {scn('h100-sxm-8gpu.scn')}\n" + VIOL_KEYS + extra)

    def test_call_and_fields_agree(self):
        path = self.with_keys()
        try:
            with Fake(path) as f:
                h = f.handle(0)
                got = [(r, v) for r, v, _ in (self.status(f, h, p) for p in (0, 1, 2, 3, 4, 5, 10, 11))]
                self.assertEqual(got, [(SUCCESS, 11), (SUCCESS, 22), (SUCCESS, 33), (SUCCESS, 44), (SUCCESS, 55),
                                       (SUCCESS, 66), (NOT_SUPPORTED, 0), (SUCCESS, 77)])
                self.assertGreater(self.status(f, h, 0)[2], 1600000000 * 10**6)  # referenceTime, us
                self.assertEqual(field_values(f, h, *VIOL_POLICY_FIELDS, *VIOL_REASON_FIELDS),
                                 [(SUCCESS, 11), (SUCCESS, 22), (SUCCESS, 33), (SUCCESS, 44), (SUCCESS, 55),
                                  (SUCCESS, 66), (NOT_SUPPORTED, 0), (SUCCESS, 77), (SUCCESS, 22), (SUCCESS, 88),
                                  (SUCCESS, 99)])
                self.assertEqual(self.status(f, h, 12)[0], INVALID)
                self.assertEqual(f.lib.nvmlDeviceGetViolationStatus(h, 0, None), INVALID)
                # GPU 1 has none of the keys: the fake invents nothing.
                h1 = f.handle(1)
                self.assertEqual([self.status(f, h1, p)[0] for p in (0, 1, 2, 3, 4, 5, 11)], [NOT_SUPPORTED] * 7)
                self.assertEqual([r for r, _ in field_values(f, h1, *VIOL_POLICY_FIELDS, *VIOL_REASON_FIELDS)],
                                 [NOT_SUPPORTED] * 11)
        finally:
            os.unlink(path)

    def test_violation_fields_false(self):
        path = self.with_keys("violation_fields = false\n")
        try:
            with Fake(path) as f:
                h = f.handle(0)
                self.assertEqual([r for r, _ in field_values(f, h, *VIOL_POLICY_FIELDS, *VIOL_REASON_FIELDS)],
                                 [NOT_SUPPORTED] * 11)
                self.assertEqual(self.status(f, h, 0)[:2], (SUCCESS, 11))
        finally:
            os.unlink(path)

    def test_faults_of_the_call(self):
        # A fault on the call is the policy fields' answer; HW thermal and power brake have
        # no call and still answer.
        path = self.with_keys("fault nvmlDeviceGetViolationStatus 0 GPU_IS_LOST\n")
        try:
            with Fake(path) as f:
                h = f.handle(0)
                self.assertEqual(self.status(f, h, 0)[0], LOST)
                got = [r for r, _ in field_values(f, h, 74, 75, 81, 269, 270, 271)]
                self.assertEqual(got, [LOST, LOST, LOST, LOST, SUCCESS, SUCCESS])
        finally:
            os.unlink(path)


class HealthFields(unittest.TestCase):
    """nvmlDeviceGetFieldValues' memory health, PCIe replay and power limit fields answer what
    the calls they stand for answer."""

    def test_same_as_the_calls(self):
        with Fake(scn("a100-dbe-remap.scn")) as f:
            for i in range(2):
                h = f.handle(i)
                got = field_values(f, h, *ECC_TOTALS, *REMAPPED, PCIE_REPLAY)
                want = [f.u64("nvmlDeviceGetTotalEccErrors", h, e, k) for k in (0, 1) for e in (0, 1)]
                a, b, c, d = (ctypes.c_uint() for _ in range(4))
                r = f.lib.nvmlDeviceGetRemappedRows(h, *(ctypes.byref(x) for x in (a, b, c, d)))
                want += [(r, x.value) for x in (a, b, c, d)]
                want.append(f.u32("nvmlDeviceGetPcieReplayCounter", h))
                self.assertEqual(got, want, i)
            self.assertEqual(field_values(f, f.handle(1), ECC_TOTALS[1])[0], (SUCCESS, 1))
        with Fake(scn("h100-sxm-8gpu.scn")) as f:
            h = f.handle(0)
            lo, hi = ctypes.c_uint(), ctypes.c_uint()
            r = f.lib.nvmlDeviceGetPowerManagementLimitConstraints(h, ctypes.byref(lo), ctypes.byref(hi))
            want = [(r, lo.value), (r, hi.value), f.u32("nvmlDeviceGetPowerManagementDefaultLimit", h),
                    f.u32("nvmlDeviceGetEnforcedPowerLimit", h)]
            self.assertEqual(field_values(f, h, *POWER_LIMITS), want)
            self.assertEqual(want[0], (SUCCESS, 200000))
            # The module scope (1) is not modelled.
            self.assertEqual([r for r, _ in field_values(f, h, *((fid, 1) for fid in POWER_LIMITS))],
                             [NOT_SUPPORTED] * 4)
            # Hopper retires no pages: NOT_SUPPORTED, as nvmlDeviceGetRetiredPages answers.
            self.assertEqual([r for r, _ in field_values(f, h, *RETIRED, *ECC_DEV)], [NOT_SUPPORTED] * 5)

    def test_health_fields_false(self):
        path = write_scenario(f"include {scn('h100-sxm-8gpu.scn')}\n[gpu *]\nhealth_fields = false\n")
        try:
            with Fake(path) as f:
                h = f.handle(0)
                got = field_values(f, h, *ECC_TOTALS, *REMAPPED, PCIE_REPLAY, *POWER_LIMITS, 82)
                self.assertEqual([r for r, _ in got[:-1]], [NOT_SUPPORTED] * 13)
                self.assertEqual(got[-1], (SUCCESS, 48))  # other fields still answer (memory temperature)
                self.assertEqual(f.u64("nvmlDeviceGetTotalEccErrors", h, 0, 0), (SUCCESS, 0))
        finally:
            os.unlink(path)

    def test_faults_of_the_call(self):
        # A fault on the call is its fields' answer, counted as one call per field group (the
        # four remapped rows fields are one call); other GPUs and fields are untouched.
        path = write_scenario(f"include {scn('h100-sxm-8gpu.scn')}\n"
                              "fault nvmlDeviceGetTotalEccErrors 0 NVML_ERROR_UNKNOWN call=2\n"
                              "fault nvmlDeviceGetRemappedRows * GPU_IS_LOST call=2\n")
        try:
            with Fake(path) as f:
                got = [r for r, _ in field_values(f, f.handle(0), *ECC_TOTALS, *REMAPPED, PCIE_REPLAY)]
                self.assertEqual(got, [SUCCESS, UNKNOWN, SUCCESS, SUCCESS] + [SUCCESS] * 4 + [SUCCESS])
                got = [r for r, _ in field_values(f, f.handle(1), *ECC_TOTALS, *REMAPPED)]
                self.assertEqual(got, [SUCCESS] * 4 + [LOST] * 4)
                self.assertEqual(f.u64("nvmlDeviceGetTotalEccErrors", f.handle(0), 0, 0), (SUCCESS, 0))
        finally:
            os.unlink(path)

    def test_hang_of_the_call_hangs_the_field_call(self):
        path = write_scenario(f"include {scn('h100-sxm-8gpu.scn')}\nhang nvmlDeviceGetRemappedRows 3\n")
        code = r"""
import ctypes, os, sys, threading
l = ctypes.CDLL(sys.argv[1])
assert l.nvmlInit_v2() == 0
def handle(i):
    h = ctypes.c_void_p(); assert l.nvmlDeviceGetHandleByIndex_v2(i, ctypes.byref(h)) == 0; return h
def fields(i, fid):
    buf = ctypes.create_string_buffer(40)
    ctypes.c_uint.from_buffer(buf, 0).value = fid
    return l.nvmlDeviceGetFieldValues(handle(i), 1, buf), ctypes.c_int.from_buffer(buf, 28).value
done = []
t = threading.Thread(target=lambda: done.append(fields(3, 142)), daemon=True)
t.start(); t.join(1.0)
print("hung" if t.is_alive() and not done else "returned", flush=True)
print("other", fields(3, 3), fields(2, 142), flush=True)
os._exit(0)
"""
        try:
            r = subprocess.run([sys.executable, "-c", code, fakeenv.LIB], env=fakeenv.run_env(path),
                               capture_output=True, text=True, timeout=60)
            self.assertEqual(r.stdout.split("\n")[:2], ["hung", "other (0, 0) (0, 0)"], r.stderr)
        finally:
            os.unlink(path)


class Faults(unittest.TestCase):
    def with_rules(self, rules):
        return write_scenario(f"include {scn('h100-sxm-8gpu.scn')}\n{rules}\n")

    def test_call_after_always(self):
        path = self.with_rules("fault nvmlDeviceGetTemperature 1 NVML_ERROR_TIMEOUT call=2\n"
                               "fault nvmlDeviceGetPowerUsage * UNKNOWN after=1\n"
                               "fault nvmlDeviceGetSerial 0 NVML_ERROR_NO_PERMISSION\n")
        try:
            with Fake(path) as f:
                h1 = f.handle(1)
                got = [f.u32("nvmlDeviceGetTemperature", h1, 0)[0] for _ in range(3)]
                self.assertEqual(got, [SUCCESS, TIMEOUT, SUCCESS])
                self.assertEqual(f.u32("nvmlDeviceGetTemperature", f.handle(2), 0)[0], SUCCESS)
                got = [f.u32("nvmlDeviceGetPowerUsage", f.handle(i))[0] for i in range(3)]
                self.assertEqual(got, [SUCCESS, UNKNOWN, UNKNOWN])
                buf = ctypes.create_string_buffer(64)
                self.assertEqual(f.lib.nvmlDeviceGetSerial(f.handle(0), buf, 64), 4)
                self.assertEqual(f.lib.nvmlDeviceGetSerial(f.handle(1), buf, 64), SUCCESS)
        finally:
            os.unlink(path)

    def test_latency(self):
        path = self.with_rules("latency * 30\nlatency nvmlDeviceGetName 0\n")
        try:
            with Fake(path) as f:
                h = f.handle(0)
                t0 = time.monotonic()
                f.u32("nvmlDeviceGetPowerUsage", h)
                self.assertGreaterEqual(time.monotonic() - t0, 0.029)
                buf = ctypes.create_string_buffer(96)
                t0 = time.monotonic()
                f.lib.nvmlDeviceGetName(h, buf, 96)
                self.assertLess(time.monotonic() - t0, 0.029)
                # latency is served without the lock: 8 threads take ~30 ms, not 240
                t0 = time.monotonic()
                ts = [threading.Thread(target=f.u32, args=("nvmlDeviceGetPowerUsage", h)) for _ in range(8)]
                for t in ts:
                    t.start()
                for t in ts:
                    t.join()
                self.assertLess(time.monotonic() - t0, 0.2)
        finally:
            os.unlink(path)

    def test_hang_blocks_only_its_call(self):
        code = r"""
import ctypes, os, sys, threading, time
l = ctypes.CDLL(sys.argv[1])
assert l.nvmlInit_v2() == 0
def handle(i):
    h = ctypes.c_void_p(); assert l.nvmlDeviceGetHandleByIndex_v2(i, ctypes.byref(h)) == 0; return h
v = ctypes.c_uint()
done = []
t = threading.Thread(target=lambda: done.append(l.nvmlDeviceGetPowerUsage(handle(3), ctypes.byref(v))), daemon=True)
t.start(); t.join(1.0)
print("hung" if t.is_alive() and not done else "returned", flush=True)
print("other", l.nvmlDeviceGetTemperature(handle(3), 0, ctypes.byref(v)), v.value,
      l.nvmlDeviceGetPowerUsage(handle(2), ctypes.byref(v)), flush=True)
os._exit(0)
"""
        r = subprocess.run([sys.executable, "-c", code, fakeenv.LIB], env=fakeenv.run_env(scn("hang.scn")),
                           capture_output=True, text=True, timeout=60)
        self.assertEqual(r.stdout.split("\n")[:2], ["hung", "other 0 41 0"], r.stderr)

    def test_threads_count_exactly(self):
        path = self.with_rules("fault nvmlDeviceGetPowerUsage * NVML_ERROR_UNKNOWN after=1000\n")
        try:
            with Fake(path) as f:
                hs = [f.handle(i) for i in range(8)]
                errors = []

                def work(h):
                    n = 0
                    v = ctypes.c_uint()
                    buf = ctypes.create_string_buffer(96)
                    for _ in range(500):
                        n += f.lib.nvmlDeviceGetPowerUsage(h, ctypes.byref(v)) == UNKNOWN
                        f.lib.nvmlDeviceGetName(h, buf, 96)
                    errors.append(n)
                ts = [threading.Thread(target=work, args=(h,)) for h in hs]
                for t in ts:
                    t.start()
                for t in ts:
                    t.join()
                self.assertEqual(sum(errors), 8 * 500 - 1000)
        finally:
            os.unlink(path)


class BadScenarios(unittest.TestCase):
    CASES = [
        ("[gpu 0]\nname = X\nbogus_key = 1\n", 3, "unknown key 'bogus_key'"),
        ("[gpu 0]\nmemory_total = 12 parsecs\n", 2, "unknown unit"),
        ("[gpu 0]\ntemperature = hot\n", 2, "is not a number"),
        ("[gpu 0]\npower_usage = 1.2345 W\n", 2, "watts"),
        ("[gpu 0]\npci_bus_id = 0000:zz:00.0\n", 2, "PCI bus id"),
        ("[gpu 0]\npstate = P16\n", 2, "performance state"),
        ("[gpu 0]\nnvlink.36.state = up\n", 2, "link number"),
        ("[gpu 0]\nnvlink.1.colour = red\n", 2, "unknown NVLink field"),
        ("[gpu 0\n", 1, "malformed section"),
        ("[gpu 99]\n", 1, "out of range"),
        ("[gpu 1]\nname = X\n", 2, "GPU 0 is not defined"),
        ("fault nvmlDeviceGetNothing 0 NVML_ERROR_UNKNOWN\n", 1, "unknown NVML function"),
        ("fault nvmlDeviceGetName 0 NVML_ERROR_BOGUS\n", 1, "unknown NVML return code"),
        ("fault nvmlDeviceGetName 0 UNKNOWN call=0\n", 1, "call=N"),
        ("hang * 0\n", 1, "name one function"),
        ("latency * forever\n", 1, "milliseconds"),
        ("init_error = NVML_ERROR_WHATEVER\n", 1, "unknown NVML return code"),
        ("name = outside\n", 1, "unknown global key"),
        ("just words\n", 1, "expected KEY = VALUE"),
        ("[gpu 0]\nname = " + "x" * 200 + "\n", 2, "too long"),
        ("x" * 5000 + "\n", 1, "line too long"),
        ("[gpu 0]\nprocess = abc 1MiB x\n", 2, "process"),
        ("[gpu 0]\nmemory_total = 99999999999999999999 GiB\n", 2, "not a number"),
        ("include does-not-exist.scn\n", 1, "cannot open"),
    ]

    def test_cases(self):
        for text, line, what in self.CASES:
            path = write_scenario(text)
            try:
                r = init_in_subprocess(path)
                self.assertIn("rc 999", r.stdout, text)
                self.assertIn(f"fake-nvml: {path}:{line}: ", r.stderr, text)
                self.assertIn(what, r.stderr, text)
            finally:
                os.unlink(path)

    def test_missing_and_unset(self):
        r = init_in_subprocess("/nonexistent/x.scn")
        self.assertIn("rc 999", r.stdout)
        self.assertIn("fake-nvml: /nonexistent/x.scn:0: cannot open", r.stderr)

    def test_include_loop(self):
        with tempfile.TemporaryDirectory() as d:
            a = os.path.join(d, "a.scn")
            with open(a, "w") as f:
                f.write("include a.scn\n")
            r = init_in_subprocess(a)
            self.assertIn("rc 999", r.stdout)
            self.assertIn("nested too deep", r.stderr)

    def test_garbage_never_crashes(self):
        import random
        rnd = random.Random(3)
        base = open(scn("h100-sxm-8gpu.scn"), "rb").read()
        for i in range(40):
            data = bytearray(base)
            for _ in range(rnd.randint(1, 30)):
                data[rnd.randrange(len(data))] = rnd.randrange(256)
            if i % 4 == 0:
                data = bytes(rnd.randrange(256) for _ in range(2000))
            with tempfile.NamedTemporaryFile("wb", suffix=".scn", delete=False) as f:
                f.write(bytes(data))
            try:
                r = init_in_subprocess(f.name)
                self.assertRegex(r.stdout, r"rc (0|999|\d+)\n", r.stderr)
                self.assertGreaterEqual(r.returncode, 0, r.stderr)
                if "rc 999" in r.stdout:
                    self.assertIn("fake-nvml: " + f.name + ":", r.stderr)
            finally:
                os.unlink(f.name)


class Gpm(unittest.TestCase):
    """GPM: support where the scenario gives values, samples that must be live, taken, of one
    GPU and in order, and the scenario's values per metric id."""
    SCN = ("[gpu 0-7]\ngpm_activity = 62.5 58 31.25 40.5 55 0.75 21 3\ngpm_traffic = 1024 2048.5 - 38912\n"
           "[gpu 1]\ngpm_activity = N/A\ngpm_traffic = N/A\n")

    def alloc(self, f):
        s = ctypes.c_void_p()
        self.assertEqual(f.lib.nvmlGpmSampleAlloc(ctypes.byref(s)), SUCCESS)
        return s

    def metrics(self, f, s1, s2, ids, version=1):
        mg = GpmMetricsGet(version=version, numMetrics=len(ids), sample1=s1, sample2=s2)
        for i, m in enumerate(ids):
            mg.metrics[i].metricId = m
        return f.lib.nvmlGpmMetricsGet(ctypes.byref(mg)), mg

    def test_contract(self):
        path = write_scenario("include %s\n%s" % (scn("h100-sxm-8gpu.scn"), self.SCN))
        try:
            with Fake(path) as f:
                h0, h1, h2 = f.handle(0), f.handle(1), f.handle(2)
                support = (ctypes.c_uint * 2)(1, 99)
                self.assertEqual(f.lib.nvmlGpmQueryDeviceSupport(h0, support), SUCCESS)
                self.assertEqual(support[1], 1)
                support[1] = 99
                self.assertEqual(f.lib.nvmlGpmQueryDeviceSupport(h1, support), SUCCESS)
                self.assertEqual(support[1], 0)
                support[0] = 2
                self.assertEqual(f.lib.nvmlGpmQueryDeviceSupport(h0, support), 25)  # version mismatch
                a, b, c = self.alloc(f), self.alloc(f), self.alloc(f)
                self.assertEqual(f.lib.nvmlGpmSampleGet(h1, a), NOT_SUPPORTED)
                self.assertEqual(self.metrics(f, a, b, [1])[0], INVALID)  # neither taken
                self.assertEqual(f.lib.nvmlGpmSampleGet(h0, a), SUCCESS)
                self.assertEqual(f.lib.nvmlGpmSampleGet(h0, b), SUCCESS)
                self.assertEqual(f.lib.nvmlGpmSampleGet(h2, c), SUCCESS)
                self.assertEqual(self.metrics(f, b, a, [1])[0], INVALID)  # newer first
                self.assertEqual(self.metrics(f, a, a, [1])[0], INVALID)  # one sample twice
                self.assertEqual(self.metrics(f, a, c, [1])[0], INVALID)  # two GPUs
                self.assertEqual(self.metrics(f, a, b, [1], version=2)[0], 25)
                self.assertEqual(self.metrics(f, a, b, [])[0], INVALID)
                r, mg = self.metrics(f, a, b, [1, 2, 3, 5, 10, 11, 12, 13, 20, 21, 60, 61, 4, 500])
                self.assertEqual(r, SUCCESS)
                got = [(m.nvmlReturn, m.value) for m in mg.metrics[:14]]
                want = [(0, 62.5), (0, 58.0), (0, 31.25), (0, 40.5), (0, 55.0), (0, 0.75), (0, 21.0), (0, 3.0),
                        (0, 1024.0), (0, 2048.5), (NOT_SUPPORTED, 0.0), (0, 38912.0),
                        (NOT_SUPPORTED, 0.0), (INVALID, 0.0)]
                self.assertEqual(got, want)
                for s in (a, b, c):
                    self.assertEqual(f.lib.nvmlGpmSampleFree(s), SUCCESS)
                self.assertEqual(f.lib.nvmlGpmSampleFree(a), INVALID)  # freed already
                self.assertEqual(f.lib.nvmlGpmSampleGet(h0, a), INVALID)
        finally:
            os.unlink(path)

    def test_leak_said_at_shutdown(self):
        path = write_scenario("include %s\n%s" % (scn("h100-sxm-8gpu.scn"), self.SCN))
        code = ("import ctypes,sys; l=ctypes.CDLL(sys.argv[1]); l.nvmlInit_v2(); s=ctypes.c_void_p(); "
                "l.nvmlGpmSampleAlloc(ctypes.byref(s)); l.nvmlShutdown()")
        try:
            r = subprocess.run([sys.executable, "-c", code, fakeenv.LIB], env=fakeenv.run_env(path),
                               capture_output=True, text=True, timeout=30)
            self.assertIn("fake-nvml: nvmlShutdown with 1 GPM samples not freed", r.stderr)
        finally:
            os.unlink(path)


if __name__ == "__main__":
    unittest.main(verbosity=2)
