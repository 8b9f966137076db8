#!/usr/bin/env python3
"""What every command pays at start-up (docs/perf.md "Issue 41: start-up"): the libraries
gpuvet's ELF header names as NEEDED are only those every command uses. A library that one
command needs (the HTTP server, curses, libxcrypt, Nettle, libyaml, libarchive, libpci,
the vendor libraries) is loaded by that command at run time through core/dynlib.h. Fails naming each
library outside the list.

Usage: test_needed_libs.py GPUVET [GPUVET_TEST_HOOKS ...]"""
import re
import shutil
import subprocess
import sys

# libc and the loader; libm (stats, host FLOPS); jansson (every report). libdl and
# libpthread are libc's own since glibc 2.34 and stand apart only before it.
ALLOWED = ("libc", "ld-linux", "libm", "libjansson", "libdl", "libpthread")
# A sanitizer build's runtimes: the build's instrumentation, not what gpuvet ships with.
SANITIZER_RUNTIMES = ("libasan", "libubsan", "liblsan", "libtsan", "libclang_rt")
NEEDED = re.compile(r"\(NEEDED\)\s+Shared library: \[([^\]]+)\]")


def stem(soname):
    """libjansson.so.4 -> libjansson, ld-linux-x86-64.so.2 -> ld-linux."""
    name = soname.split(".so")[0]
    for allowed in ALLOWED:
        if name == allowed or name.startswith(allowed + "-"):
            return allowed
    return name


def main():
    if not shutil.which("readelf"):
        print("SKIP readelf is not installed (binutils)")
        return 77
    failed = False
    for binary in sys.argv[1:]:
        out = subprocess.run(["readelf", "-d", binary], capture_output=True, text=True, check=True).stdout
        needed = NEEDED.findall(out)
        extra = [n for n in needed if stem(n) not in ALLOWED and not n.startswith(SANITIZER_RUNTIMES)]
        for n in extra:
            print("FAIL %s is NEEDED by %s: every command pays for loading it; load it where it is used "
                  "(core/dynlib.h)" % (n, binary))
        if extra:
            failed = True
        else:
            print("ok: %s needs only %s" % (binary, ", ".join(needed)))
    if failed:
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
