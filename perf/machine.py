"""The machine a perf figure comes from. Every script under perf/ prints this line first, so a
figure copied into docs/perf.md carries its CPU model, SIMD flags and load with it (a figure
that holds on one CPU only is not a result: issue 13)."""
import os
import platform

SIMD_FLAGS = ["sse4_2", "avx", "avx2", "fma", "avx512f", "avx512vl", "avx512_fp16", "amx_tile"]


def cpu():
    """(model name, the SIMD flags of SIMD_FLAGS the CPU has)."""
    model, flags = "?", set()
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name") and model == "?":
                    model = line.split(":", 1)[1].strip()
                elif line.startswith("flags") and not flags:
                    flags = set(line.split(":", 1)[1].split())
    except OSError:
        pass
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
