"""The machine a perf figure comes from. Every script under perf/ prints this line first, so a
figure copied into docs/perf.md carries its CPU model, SIMD flags and load with it (a figure
that holds on one CPU only is not a result: issue 13)."""
import os
import platform

SIMD_FLAGS = ["sse4_2", "avx", "avx2", "fma", "avx512f", "avx512vl", "avx512_fp16", "amx_tile"]


def cpu():
    """(model name with its family and model numbers, the SIMD flags of SIMD_FLAGS the CPU
    has). A guest's model name may say only "AMD EPYC": family 25 model 17 (Zen 4) and
    family 26 model 2 (Zen 5) differ in what a benchmark measures."""
    fields, flags = {}, set()
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                key, _, value = line.partition(":")
                key = key.strip()
                if key in ("model name", "cpu family", "model", "stepping") and key not in fields:
                    fields[key] = value.strip()
                elif key == "flags" and not flags:
                    flags = set(value.split())
                elif not line.strip() and fields:
                    break  # the first CPU's block is enough
    except OSError:
        pass
    model = fields.get("model name", "?")
    if "cpu family" in fields and "model" in fields:
        model += " (family %s model %s stepping %s)" % (fields["cpu family"], fields["model"], fields.get("stepping", "?"))
    return model, [f for f in SIMD_FLAGS if f in flags]


def load():
    try:
        with open("/proc/loadavg") as f:
            return " ".join(f.read().split()[:3])
    except OSError:
        return "?"


def describe(extra=None):
    """One line: CPU model, logical CPUs, SIMD flags, kernel, load average (and extra)."""
    model, simd = cpu()
    line = "machine: %s, %d logical CPUs, SIMD %s; %s %s; load average %s" % (
        model, os.cpu_count() or 0, " ".join(simd) or "none of " + "/".join(SIMD_FLAGS),
        platform.system(), platform.release(), load())
    return line + ("; " + extra if extra else "")


def print_header(extra=None):
    print(describe(extra), flush=True)
