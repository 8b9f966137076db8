#!/usr/bin/env python3
"""Build a fake-NVML scenario (tests/fakes/README.md) from a real `nvidia-smi -q` capture.

    smi2scenario.py CAPTURE.txt > out.scn

CAPTURE is either plain `nvidia-smi -q` output or an nvidia_gpu_exporter capture
(tests/realdata/nvidia_gpu_exporter/*.txt), whose first "# $ nvidia-smi -q" section
is used; from such a capture the `nvidia-smi nvlink -s` section also gives the NVLink
states and `nvidia-smi -L` the MIG device names and UUIDs.

The indented "Key : value" tree is parsed as a tree. "N/A", "[N/A]" and "Not Supported"
leave the key out (the fake then answers NOT_SUPPORTED, as NVML did for nvidia-smi); a
value nvidia-smi printed as an NVML error string ("Requested functionality has been
deprecated", "Unknown Error") becomes a `fault` line making the NVML call behind that
label return that error (FAULT_CALLS). A capture with no GPU section, a value that does
not parse, or an error string on a label whose call a scenario cannot fail alone is an
error naming the file and line (exit status 1). Standard library only.
"""
import re
import sys

NA = {"N/A", "[N/A]", "Not Supported", "[Not Supported]"}

# nvmlErrorString texts nvidia-smi prints in place of a value -> the NVML return code.
# "Unknown Error" is NVML_ERROR_UNKNOWN's: the call failed, which is not "the GPU does not
# offer it" (NOT_SUPPORTED), so it must not leave the key out as N/A does.
ERROR_TEXTS = {
    "Requested functionality has been deprecated": "NVML_ERROR_DEPRECATED",
    "Insufficient Permissions": "NVML_ERROR_NO_PERMISSION",
    "GPU is lost": "NVML_ERROR_GPU_IS_LOST",
    "Not Found": "NVML_ERROR_NOT_FOUND",
    "Timeout": "NVML_ERROR_TIMEOUT",
    "Unknown Error": "NVML_ERROR_UNKNOWN",
}

# The NVML call behind an nvidia-smi label (its path under the GPU section; "*" any label
# of that section), for labels whose parser names no call itself: an error string there
# becomes a fault of that call. A label not here whose value is an error string cannot be
# converted: the fake answers its key from a shared call (nvmlDeviceGetFieldValues) or a
# sum of several, and failing those would fail more than nvidia-smi saw fail.
FAULT_CALLS = {
    ("Product Name",): "nvmlDeviceGetName",
    ("Product Brand",): "nvmlDeviceGetBrand",
    ("Product Architecture",): "nvmlDeviceGetArchitecture",
    ("Serial Number",): "nvmlDeviceGetSerial",
    ("GPU UUID",): "nvmlDeviceGetUUID",
    ("Minor Number",): "nvmlDeviceGetMinorNumber",
    ("VBIOS Version",): "nvmlDeviceGetVbiosVersion",
    ("Inforom Version", "Image Version"): "nvmlDeviceGetInforomImageVersion",
    ("MIG Mode", "*"): "nvmlDeviceGetMigMode",
    ("PCI", "Bus Id"): "nvmlDeviceGetPciInfo_v3",
    ("PCI", "Device Id"): "nvmlDeviceGetPciInfo_v3",
    ("PCI", "Sub System Id"): "nvmlDeviceGetPciInfo_v3",
    ("PCI", "GPU Link Info", "PCIe Generation", "Max"): "nvmlDeviceGetMaxPcieLinkGeneration",
    ("PCI", "GPU Link Info", "PCIe Generation", "Current"): "nvmlDeviceGetCurrPcieLinkGeneration",
    ("PCI", "GPU Link Info", "Link Width", "Max"): "nvmlDeviceGetMaxPcieLinkWidth",
    ("PCI", "GPU Link Info", "Link Width", "Current"): "nvmlDeviceGetCurrPcieLinkWidth",
    ("PCI", "Replays Since Reset"): "nvmlDeviceGetPcieReplayCounter",
    ("Fan Speed",): "nvmlDeviceGetFanSpeed",
    ("PCI", "Tx Throughput"): "nvmlDeviceGetPcieThroughput",
    ("PCI", "Rx Throughput"): "nvmlDeviceGetPcieThroughput",
    ("Performance State",): "nvmlDeviceGetPerformanceState",
    ("FB Memory Usage", "*"): "nvmlDeviceGetMemoryInfo_v2",
    ("BAR1 Memory Usage", "*"): "nvmlDeviceGetBAR1MemoryInfo",
    ("Compute Mode",): "nvmlDeviceGetComputeMode",
    ("Utilization", "GPU"): "nvmlDeviceGetUtilizationRates",
    ("Utilization", "Memory"): "nvmlDeviceGetUtilizationRates",
    ("Utilization", "Encoder"): "nvmlDeviceGetEncoderUtilization",
    ("Utilization", "Decoder"): "nvmlDeviceGetDecoderUtilization",
    ("ECC Mode", "*"): "nvmlDeviceGetEccMode",
    ("Retired Pages", "Single Bit ECC"): "nvmlDeviceGetRetiredPages",
    ("Retired Pages", "Double Bit ECC"): "nvmlDeviceGetRetiredPages",
    ("Retired Pages", "Pending Page Blacklist"): "nvmlDeviceGetRetiredPagesPendingStatus",
    ("Remapped Rows", "*"): "nvmlDeviceGetRemappedRows",
    ("Remapped Rows", "Bank Remap Availability Histogram", "*"): "nvmlDeviceGetRowRemapperHistogram",
    ("Temperature", "GPU Current Temp"): "nvmlDeviceGetTemperature",
    ("Temperature", "GPU Shutdown Temp"): "nvmlDeviceGetTemperatureThreshold",
    ("Temperature", "GPU Slowdown Temp"): "nvmlDeviceGetTemperatureThreshold",
    ("Temperature", "GPU Max Operating Temp"): "nvmlDeviceGetTemperatureThreshold",
    ("Temperature", "Memory Max Operating Temp"): "nvmlDeviceGetTemperatureThreshold",
    ("Temperature", "GPU T.Limit Temp"): "nvmlDeviceGetMarginTemperature",
    ("GPU Power Readings", "Min Power Limit"): "nvmlDeviceGetPowerManagementLimitConstraints",
    ("GPU Power Readings", "Max Power Limit"): "nvmlDeviceGetPowerManagementLimitConstraints",
    ("Power Readings", "Min Power Limit"): "nvmlDeviceGetPowerManagementLimitConstraints",
    ("Power Readings", "Max Power Limit"): "nvmlDeviceGetPowerManagementLimitConstraints",
}

# nvidia-smi's words for nvmlGpuRecoveryAction_t, as NVIDIA's "Error Recovery and Response
# Flags" names them (https://docs.nvidia.com/deploy/a100-gpu-mem-error-mgmt/error-recovery-and-response-flags.html)
RECOVERY_ACTIONS = {"None": "0", "Reset": "1", "Reboot": "2", "Drain P2P": "3", "Drain and Reset": "4"}

# nvidia-smi's words for the fabric status (an nvmlReturn_t) -> its NVML name: "Success",
# nvmlErrorString texts, and "Insufficient Resources", which nvidia-smi prints for
# NVML_ERROR_INSUFFICIENT_RESOURCES on a GPU the fabric could not take in (seen on
# GB200 nodes: https://github.com/Azure/azhpc-images/pull/506)
FABRIC_STATUS = dict(ERROR_TEXTS, **{"Success": "NVML_SUCCESS",
                                    "Insufficient Resources": "NVML_ERROR_INSUFFICIENT_RESOURCES"})

IGNORE_ERRORS = False  # fault_fn for a label whose error string says nothing of NVML


class ConvertError(Exception):
    pass


class Node:
    def __init__(self, key, value, line):
        self.key = key
        self.value = value  # None for a section header
        self.line = line
        self.children = []
        self.parent = None

    def path(self):
        """Labels from below the GPU section ("GPU 0000...") down to this node."""
        labels, node = [], self
        while node is not None and node.parent is not None and node.parent.parent is not None:
            labels.append(node.key)
            node = node.parent
        return tuple(reversed(labels))

    def get(self, *path):
        """Labels match case-insensitively: drivers spell them "GPU"/"Gpu", "ECC"/"Ecc"."""
        node = self
        for key in path:
            node = next((c for c in node.children if same(c.key, key)), None)
            if node is None:
                return None
        return node

    def all(self, key):
        return [c for c in self.children if same(c.key, key)]


def same(label, key):
    return label.casefold() == key.casefold()


KV_RE = re.compile(r"^( *)(\S.*?)\s+:(?: (.*?))?\s*$")
HEADER_RE = re.compile(r"^( *)(\S.*?)\s*$")


def extract_q(text):
    """Returns (lines of the -q output, line number of its first line - 1, whole file lines)."""
    lines = text.splitlines()
    for i, line in enumerate(lines):
        if line.strip() == "# $ nvidia-smi -q":
            start = i + 1
            while start < len(lines) and lines[start].startswith("####"):
                start += 1
            end = start
            while end < len(lines) and not lines[end].startswith("####"):
                end += 1
            return lines[start:end], start, lines
    return lines, 0, lines


def parse_tree(lines, offset, fname):
    root = Node("", None, 0)
    stack = [(-1, root)]
    for i, raw in enumerate(lines):
        lineno = offset + i + 1
        if not raw.strip() or raw.startswith("=") or raw.lstrip().startswith("#"):
            continue
        if "\t" in raw[: len(raw) - len(raw.lstrip())]:
            raise ConvertError(f"{fname}:{lineno}: tab in indentation (not nvidia-smi -q output?)")
        m = KV_RE.match(raw)
        if m:
            indent, key, value = len(m.group(1)), m.group(2), (m.group(3) or "")
        else:
            m = HEADER_RE.match(raw)
            indent, key, value = len(m.group(1)), m.group(2), None
        while stack[-1][0] >= indent:
            stack.pop()
        node = Node(key, value, lineno)
        node.parent = stack[-1][1]
        stack[-1][1].children.append(node)
        stack.append((indent, node))
    return root


class Converter:
    def __init__(self, fname):
        self.fname = fname
        self.out = []
        self.faults = []

    def fail(self, node, msg):
        raise ConvertError(f"{self.fname}:{node.line}: {msg}")

    def emit(self, key, value):
        self.out.append(f"{key} = {value}")

    # -- value parsers: each returns None for N/A and raises on garbage --------------------
    def value(self, node, fault_fn=None):
        if node is None or node.value is None:
            return None
        v = node.value.strip()
        if v in NA or v == "":
            return None
        if v in ERROR_TEXTS:
            if fault_fn is IGNORE_ERRORS:
                return None
            fn = fault_fn or self.fault_call(node)
            if fn is None:
                self.fail(node, f"'{node.key}': nvidia-smi printed '{v}' ({ERROR_TEXTS[v]}) and a scenario cannot "
                                f"make the call behind this label alone fail so")
            self.faults.append((fn, ERROR_TEXTS[v]))
            return None
        return v

    @staticmethod
    def fault_call(node):
        """The call FAULT_CALLS gives for the node's label: its exact path first, then the
        nearest section that has "*"."""
        path = tuple(k.casefold() for k in node.path())
        calls = {tuple(k.casefold() for k in key): fn for key, fn in FAULT_CALLS.items()}
        if path in calls:
            return calls[path]
        for i in range(len(path) - 1, 0, -1):
            fn = calls.get(path[:i] + ("*",))
            if fn:
                return fn
        return None

    def number(self, node, unit=None, fault_fn=None, signed=False, decimals=False):
        v = self.value(node, fault_fn)
        if v is None:
            return None
        num = r"-?\d+" if signed else r"\d+"
        if decimals:
            num += r"(?:\.\d+)?"
        pat = rf"({num})" + (rf"\s*{re.escape(unit)}" if unit else "")
        m = re.fullmatch(pat, v)
        if not m:
            self.fail(node, f"'{node.key}': cannot parse value '{v}'" + (f" (expected a number in {unit})" if unit else ""))
        return m.group(1)

    def hexnum(self, node):
        v = self.value(node)
        if v is None:
            return None
        if not re.fullmatch(r"0x[0-9A-Fa-f]+", v):
            self.fail(node, f"'{node.key}': cannot parse value '{v}' (expected 0x...)")
        return v

    def choice(self, node, table, fault_fn=None):
        v = self.value(node, fault_fn)
        if v is None:
            return None
        for k, out in table.items():
            if same(v, k):
                return out
        self.fail(node, f"'{node.key}': cannot parse value '{v}' (expected one of {', '.join(sorted(table))})")

    # -- sections ------------------------------------------------------------------------
    def put(self, key, value):
        if value is not None:
            self.emit(key, value)

    def gpu(self, index, g, mig_names, nvlinks):
        put = self.put
        enabled = {"Enabled": "enabled", "Disabled": "disabled"}
        yes_no = {"Yes": "yes", "No": "no"}
        self.out.append("")
        self.out.append(f"[gpu {index}]")
        put("name", self.value(g.get("Product Name")))
        brand = self.value(g.get("Product Brand"))
        if brand is not None:
            b = brand.lower().replace(" ", "_")
            known = {"unknown", "quadro", "tesla", "nvs", "grid", "geforce", "titan", "nvidia_vapps", "nvidia_vpc",
                     "nvidia_vcs", "nvidia_vws", "nvidia_cloud_gaming", "quadro_rtx", "nvidia_rtx", "nvidia",
                     "geforce_rtx", "titan_rtx"}
            if b not in known:
                self.fail(g.get("Product Brand"), f"'Product Brand': unknown brand '{brand}'")
            put("brand", b)
        put("architecture", self.choice(g.get("Product Architecture"), {
            "Volta": "volta", "Turing": "turing", "Ampere": "ampere", "Ada Lovelace": "ada", "Hopper": "hopper",
            "Blackwell": "blackwell"}))
        # nvidia-smi of drivers 580 on prints "deprecated" for the display mode whatever NVML
        # answers (NVML 580.159.04 still returned Enabled), so that text says nothing of NVML.
        put("display_mode", self.choice(g.get("Display Mode"), enabled, IGNORE_ERRORS))
        put("display_active", self.choice(g.get("Display Active"), enabled, "nvmlDeviceGetDisplayActive"))
        put("persistence_mode", self.choice(g.get("Persistence Mode"), enabled, "nvmlDeviceGetPersistenceMode"))
        put("mig_mode_current", self.choice(g.get("MIG Mode", "Current"), enabled))
        put("mig_mode_pending", self.choice(g.get("MIG Mode", "Pending"), enabled))
        put("serial", self.value(g.get("Serial Number")))
        put("uuid", self.value(g.get("GPU UUID")))
        put("minor_number", self.number(g.get("Minor Number")))
        put("vbios", self.value(g.get("VBIOS Version")))
        put("inforom_image", self.value(g.get("Inforom Version", "Image Version")))
        put("recovery_action", self.choice(g.get("GPU Recovery Action"), RECOVERY_ACTIONS))

        bus_id = self.value(g.get("PCI", "Bus Id"))
        if bus_id is not None and not re.fullmatch(r"[0-9A-Fa-f]{4,8}:[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2}\.[0-7]", bus_id):
            self.fail(g.get("PCI", "Bus Id"), f"'Bus Id': cannot parse value '{bus_id}'")
        put("pci_bus_id", bus_id)
        put("pci_device_id", self.hexnum(g.get("PCI", "Device Id")))
        put("pci_subsystem_id", self.hexnum(g.get("PCI", "Sub System Id")))
        link = g.get("PCI", "GPU Link Info")
        if link is not None:
            put("pcie_gen_max", self.number(link.get("PCIe Generation", "Max")))
            put("pcie_gen_current", self.number(link.get("PCIe Generation", "Current")))
            put("pcie_width_max", self.number(link.get("Link Width", "Max"), "x"))
            put("pcie_width_current", self.number(link.get("Link Width", "Current"), "x"))
        put("pcie_replay_counter", self.number(g.get("PCI", "Replays Since Reset")))
        put("pcie_tx_throughput", self.with_unit(g.get("PCI", "Tx Throughput"), "KB/s"))
        put("pcie_rx_throughput", self.with_unit(g.get("PCI", "Rx Throughput"), "KB/s"))

        put("fan_speed", self.with_unit(g.get("Fan Speed"), "%"))
        pstate = self.value(g.get("Performance State"))
        if pstate is not None:
            if not re.fullmatch(r"P(\d|1[0-5])", pstate):
                self.fail(g.get("Performance State"), f"'Performance State': cannot parse value '{pstate}'")
            put("pstate", pstate)

        reasons = g.get("Clocks Event Reasons") or g.get("Clocks Throttle Reasons")
        if reasons is not None:
            bits = {"Idle": 0x1, "Applications Clocks Setting": 0x2, "SW Power Cap": 0x4, "HW Slowdown": 0x8,
                    "Sync Boost": 0x10, "SW Thermal Slowdown": 0x20, "HW Thermal Slowdown": 0x40,
                    "HW Power Brake Slowdown": 0x80, "Display Clock Setting": 0x100}
            active = supported = 0
            seen = False

            def walk(node):
                nonlocal active, supported, seen
                for c in node.children:
                    bit = next((b for k, b in bits.items() if same(c.key, k)), None)
                    if bit is not None:
                        st = self.choice(c, {"Active": True, "Not Active": False})
                        if st is not None:
                            seen = True
                            supported |= bit
                            if st:
                                active |= bit
                    walk(c)
            walk(reasons)
            if seen:
                put("clocks_event_reasons", f"0x{active:x}")
                put("clocks_event_reasons_supported", f"0x{supported:x}")

        # Microseconds each reason held the clocks down (drivers 560+); NVML counts ns.
        counters = g.get("Clocks Event Reasons Counters")
        if counters is not None:
            for label, key in (("SW Power Capping", "violation_power"), ("Sync Boost", "violation_sync_boost"),
                               ("SW Thermal Slowdown", "violation_thermal"),
                               ("HW Thermal Slowdown", "violation_hw_thermal"),
                               ("HW Power Braking", "violation_hw_power_brake")):
                us = self.number(counters.get(label), "us")
                if us is not None:
                    put(key, f"{int(us) * 1000} ns")

        for sect, prefix in (("FB Memory Usage", "memory"), ("BAR1 Memory Usage", "bar1")):
            for key in ("Total", "Reserved", "Used", "Free"):
                if prefix == "bar1" and key == "Reserved":
                    continue
                put(f"{prefix}_{key.lower()}", self.mib(g.get(sect, key)))

        put("compute_mode", self.choice(g.get("Compute Mode"), {
            "Default": "default", "Exclusive_Thread": "exclusive_thread", "Prohibited": "prohibited",
            "Exclusive_Process": "exclusive_process"}))
        for key, name in (("GPU", "gpu"), ("Memory", "memory"), ("Encoder", "encoder"), ("Decoder", "decoder")):
            put(f"utilization_{name}", self.with_unit(g.get("Utilization", key), "%"))

        put("ecc_mode_current", self.choice(g.get("ECC Mode", "Current"), enabled))
        put("ecc_mode_pending", self.choice(g.get("ECC Mode", "Pending"), enabled))
        for kind in ("Volatile", "Aggregate"):
            node = g.get("ECC Errors", kind)
            if node is None:
                continue
            corr, unc = self.ecc_totals(node)
            put(f"ecc_{kind.lower()}_corrected", corr)
            put(f"ecc_{kind.lower()}_uncorrected", unc)
            dram, sram = self.ecc_uncorrected_by_location(node)
            put(f"ecc_{kind.lower()}_uncorrected_dram", dram)
            put(f"ecc_{kind.lower()}_uncorrected_sram", sram)
            if kind == "Aggregate":
                put("sram_threshold_exceeded", self.choice(node.get("SRAM Threshold Exceeded"), yes_no))

        put("retired_pages_sbe", self.number(g.get("Retired Pages", "Single Bit ECC")))
        put("retired_pages_dbe", self.number(g.get("Retired Pages", "Double Bit ECC")))
        put("retired_pages_pending", self.choice(g.get("Retired Pages", "Pending Page Blacklist"), yes_no))
        rr = g.get("Remapped Rows")
        if rr is not None and rr.children:
            put("remapped_rows_correctable", self.number(rr.get("Correctable Error")))
            put("remapped_rows_uncorrectable", self.number(rr.get("Uncorrectable Error")))
            put("remapped_rows_pending", self.choice(rr.get("Pending"), yes_no))
            put("remapped_rows_failure", self.choice(rr.get("Remapping Failure Occurred"), yes_no))
            # nvmlDeviceGetRowRemapperHistogram answers all five buckets or none
            hist = rr.get("Bank Remap Availability Histogram")
            if hist is not None:
                banks = [self.number(hist.get(b), "bank(s)") for b in ("Max", "High", "Partial", "Low", "None")]
                if None not in banks:
                    put("remapper_histogram", ",".join(banks))

        t = g.get("Temperature")
        if t is not None:
            put("temperature", self.with_unit(t.get("GPU Current Temp"), "C"))
            # Absolute thresholds only: the "T.Limit" lines of newer nvidia-smi are offsets
            # from the GPU's T.Limit, not what nvmlDeviceGetTemperatureThreshold returns.
            put("temperature_shutdown", self.with_unit(t.get("GPU Shutdown Temp"), "C"))
            put("temperature_slowdown", self.with_unit(t.get("GPU Slowdown Temp"), "C"))
            put("temperature_gpu_max", self.with_unit(t.get("GPU Max Operating Temp"), "C"))
            put("temperature_memory_max", self.with_unit(t.get("Memory Max Operating Temp"), "C"))
            # Newer drivers (R570+) print the T.Limit scale instead: the margin
            # (nvmlDeviceGetMarginTemperature) and thresholds on that scale (fields 193-196).
            put("temperature_margin", self.signed_c(t.get("GPU T.Limit Temp")))
            put("temperature_shutdown_tlimit", self.signed_c(t.get("GPU Shutdown T.Limit Temp")))
            put("temperature_slowdown_tlimit", self.signed_c(t.get("GPU Slowdown T.Limit Temp")))
            put("temperature_gpu_max_tlimit", self.signed_c(t.get("GPU Max Operating T.Limit Temp")))
            put("temperature_memory_max_tlimit", self.signed_c(t.get("Memory Max Operating T.Limit Temp")))
            put("temperature_memory", self.with_unit(t.get("Memory Current Temp"), "C"))

        p = g.get("GPU Power Readings") or g.get("Power Readings")
        if p is not None:
            draw = p.get("Average Power Draw") or p.get("Power Draw")
            put("power_usage", self.watts(draw, "nvmlDeviceGetPowerUsage"))
            put("power_limit", self.watts(p.get("Requested Power Limit") or p.get("Power Limit"),
                                          "nvmlDeviceGetPowerManagementLimit"))
            put("power_enforced_limit", self.watts(p.get("Current Power Limit") or p.get("Enforced Power Limit"),
                                                   "nvmlDeviceGetEnforcedPowerLimit"))
            put("power_default_limit", self.watts(p.get("Default Power Limit"),
                                                  "nvmlDeviceGetPowerManagementDefaultLimit"))
            put("power_min_limit", self.watts(p.get("Min Power Limit")))
            put("power_max_limit", self.watts(p.get("Max Power Limit")))

        clocks = (("Graphics", "graphics"), ("SM", "sm"), ("Memory", "memory"), ("Video", "video"))
        for sect, prefix, fn in (("Clocks", "clock", "nvmlDeviceGetClockInfo"),
                                 ("Max Clocks", "max_clock", "nvmlDeviceGetMaxClockInfo"),
                                 ("Applications Clocks", "app_clock", "nvmlDeviceGetApplicationsClock"),
                                 ("Default Applications Clocks", "default_app_clock",
                                  "nvmlDeviceGetDefaultApplicationsClock")):
            for key, name in clocks:
                put(f"{prefix}_{name}", self.with_unit(g.get(sect, key), "MHz", fault_fn=fn))

        f = g.get("Fabric")
        if f is not None:
            state = self.choice(f.get("State"), {"Not Supported": "not_supported", "Not Started": "not_started",
                                                 "In Progress": "in_progress", "Completed": "completed"})
            if state is not None:
                put("fabric_state", state)
                status_node = f.get("Status")
                status = status_node.value.strip() if status_node is not None and status_node.value else None
                if status is not None and status not in NA:
                    if status not in FABRIC_STATUS:
                        self.fail(status_node, f"'Status': cannot parse value '{status}'")
                    put("fabric_status", FABRIC_STATUS[status])
                put("fabric_clique_id", self.number(f.get("CliqueId")))
                uuid = self.value(f.get("ClusterUUID"))
                if uuid is not None:
                    if not re.fullmatch(r"[0-9A-Fa-f-]{32,36}", uuid) or len(uuid.replace("-", "")) != 32:
                        self.fail(f.get("ClusterUUID"), f"'ClusterUUID': cannot parse value '{uuid}'")
                    put("fabric_cluster_uuid", uuid)

        if nvlinks:
            put("nvlink_count", str(len(nvlinks)))
            for n, up in enumerate(nvlinks):
                put(f"nvlink.{n}.state", "up" if up else "down")

        self.processes(g.get("Processes"), None)

        for fn, err in dict.fromkeys(self.faults):
            self.out.append(f"fault {fn} {index} {err}")
        self.faults = []

        for mig in g.all("MIG Device"):
            self.mig(index, mig, mig_names)

    def processes(self, procs, mig):
        if procs is None or procs.value is not None:  # "Processes : None"
            return
        gi = ci = None
        for c in procs.children:
            if same(c.key, "GPU instance ID"):
                gi = self.number(c)
            elif same(c.key, "Compute instance ID"):
                ci = self.number(c)
            elif same(c.key, "Process ID"):
                pid = self.number(c)
                kind = self.value(c.get("Type")) or "C"
                name = self.value(c.get("Name")) or "[unknown]"
                mem = self.mib(c.get("Used GPU Memory")) or "0 MiB"
                opts = (f" gi={gi}" if gi is not None else "") + (f" ci={ci}" if ci is not None else "")
                if kind not in ("C", "G", "C+G", "M", "M+C"):
                    self.fail(c.get("Type"), f"'Type': cannot parse value '{kind}'")
                if "C" in kind or "M" in kind:
                    self.emit("process", f"{pid} {mem.replace(' ', '')}{opts} {name}")
                if "G" in kind:
                    self.emit("graphics_process", f"{pid} {mem.replace(' ', '')}{opts} {name}")
                gi = ci = None

    def mig(self, gpu, node, mig_names):
        index = self.number(node.get("Index"))
        if index is None:
            self.fail(node, "MIG Device without an Index")
        self.out.append("")
        self.out.append(f"[gpu {gpu} mig {index}]")
        name, uuid = mig_names.get((gpu, int(index)), (None, None))
        self.put("name", name)
        self.put("uuid", uuid)
        self.put("gpu_instance_id", self.number(node.get("GPU Instance ID")))
        self.put("compute_instance_id", self.number(node.get("Compute Instance ID")))
        for key in ("Total", "Reserved", "Used", "Free"):
            self.put(f"memory_{key.lower()}", self.mib(node.get("Shared FB Memory Usage", key)))
        for key in ("Total", "Used", "Free"):
            self.put(f"bar1_{key.lower()}", self.mib(node.get("Shared BAR1 Memory", key)))

    def mib(self, node):
        n = self.number(node, "MiB")
        return None if n is None else f"{n} MiB"

    def with_unit(self, node, unit, fault_fn=None):
        n = self.number(node, unit, fault_fn=fault_fn)
        return None if n is None else f"{n} {unit}"

    def signed_c(self, node):
        n = self.number(node, "C", signed=True)
        return None if n is None else f"{n} C"

    def watts(self, node, fault_fn=None):
        n = self.number(node, "W", fault_fn=fault_fn, decimals=True)
        return None if n is None else f"{n} W"

    def ecc_uncorrected_by_location(self, node):
        """(DRAM, SRAM) uncorrectable counts as nvmlDeviceGetMemoryErrorCounter gives them;
        SRAM sums its parity and SEC-DED lines (drivers 535+ split them). None where
        nvidia-smi had no such line (older drivers name locations differently)."""
        dram = self.number(node.get("DRAM Uncorrectable"))
        parts = [self.number(node.get(k)) for k in ("SRAM Uncorrectable", "SRAM Uncorrectable Parity",
                                                   "SRAM Uncorrectable SEC-DED")]
        parts = [int(n) for n in parts if n is not None]
        return dram, (str(sum(parts)) if parts else None)

    def ecc_totals(self, node):
        """(corrected, uncorrected) as nvmlDeviceGetTotalEccErrors counts them: every
        memory location summed; None where nvidia-smi had nothing."""
        corr = unc = None

        def add(total, n):
            return n if total is None else str(int(total) + int(n))
        # older nvidia-smi: Single Bit / Double Bit, each with a Total
        sb, db = node.get("Single Bit", "Total"), node.get("Double Bit", "Total")
        if sb is not None or db is not None:
            return self.number(sb), self.number(db)
        for c in node.children:
            if c.children or "Threshold" in c.key:
                continue
            n = self.number(c)
            if n is None:
                continue
            if "Uncorrectable" in c.key:
                unc = add(unc, n)
            elif "Correctable" in c.key:
                corr = add(corr, n)
        return corr, unc


def side_sections(lines):
    """From an nvidia_gpu_exporter capture: the NVLink states per GPU (nvlink -s) and the
    MIG device names and UUIDs (nvidia-smi -L), both keyed by GPU index."""
    nvlinks, mig_names = {}, {}
    section = None
    gpu = -1
    for line in lines:
        if line.startswith("# $ "):
            section = line[4:].strip()
            gpu = -1
            continue
        if line.startswith("#"):
            continue
        m = re.match(r"GPU (\d+): ", line)
        if m:
            gpu = int(m.group(1))
            continue
        if section == "nvidia-smi nvlink -s" and gpu >= 0:
            m = re.match(r"\s+Link (\d+): (.*)$", line)
            if m:
                nvlinks.setdefault(gpu, []).append("inactive" not in m.group(2))
        elif section == "nvidia-smi -L" and gpu >= 0:
            m = re.match(r"\s+MIG (\S+)\s+Device\s+(\d+): \(UUID: (MIG-[^)]+)\)", line)
            if m:
                mig_names[(gpu, int(m.group(2)))] = (m.group(1), m.group(3))
    return nvlinks, mig_names


def convert(text, fname):
    q, offset, all_lines = extract_q(text)
    root = parse_tree(q, offset, fname)
    gpus = [c for c in root.children if re.fullmatch(r"GPU [0-9A-F]{4,8}:[0-9A-F]{2}:[0-9A-F]{2}\.[0-7]", c.key, re.I)]
    if not gpus:
        line = offset + 1
        raise ConvertError(f"{fname}:{line}: no GPU section (expected 'GPU 00000000:BB:DD.F' in nvidia-smi -q output)")
    nvlinks, mig_names = side_sections(all_lines)
    conv = Converter(fname)
    conv.out.append(f"# Converted by tests/fakes/smi2scenario.py from {fname.split('/')[-1]} (nvidia-smi -q).")
    conv.out.append("# Keys nvidia-smi showed as N/A are absent: the fake answers NOT_SUPPORTED for them.")
    driver = conv.value(root.get("Driver Version"))
    if driver is not None:
        if not re.fullmatch(r"\d+\.\d+(\.\d+)?", driver):
            conv.fail(root.get("Driver Version"), f"'Driver Version': cannot parse value '{driver}'")
        conv.emit("driver_version", driver)
    cuda = conv.value(root.get("CUDA Version"))
    if cuda is not None:
        if not re.fullmatch(r"\d+\.\d+", cuda):
            conv.fail(root.get("CUDA Version"), f"'CUDA Version': cannot parse value '{cuda}'")
        conv.emit("cuda_driver_version", cuda)
    attached = root.get("Attached GPUs")
    if attached is not None and conv.number(attached) not in (None, str(len(gpus))):
        conv.fail(attached, f"'Attached GPUs' says {attached.value} but {len(gpus)} GPU sections follow")
    for i, g in enumerate(gpus):
        # MIG names come as "3g.40gb" from -L; NVML names the device after its parent
        names = {k: (f"{conv.value(g.get('Product Name'))} MIG {v[0]}", v[1]) for k, v in mig_names.items()}
        conv.gpu(i, g, names, nvlinks.get(i))
    return "\n".join(conv.out) + "\n"


def main(argv):
    if len(argv) != 2 or argv[1] in ("-h", "--help"):
        sys.stderr.write("usage: smi2scenario.py CAPTURE.txt > out.scn\n")
        return 2
    fname = argv[1]
    try:
        with open(fname, encoding="utf-8", errors="replace") as f:
            text = f.read()
    except OSError as e:
        sys.stderr.write(f"smi2scenario: {fname}: {e.strerror}\n")
        return 1
    try:
        sys.stdout.write(convert(text, fname))
    except ConvertError as e:
        sys.stderr.write(f"smi2scenario: {e}\n")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
