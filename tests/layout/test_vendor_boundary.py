#!/usr/bin/env python3
"""The vendor boundary (HACKING.md, "The tree"): only src/vendor/ includes a header of
src/vendor/ (NVML, CUDA, cuBLASLt and OpenCL declarations, their loaders and function
tables); the rest of src/ sees gpuvet's own types. Fails naming every file and line that
crosses it.

Usage: test_vendor_boundary.py SRC_DIR"""
import os
import re
import sys

INCLUDE = re.compile(r'^\s*#\s*include\s+"vendor/([^"]+)"')


def main():
    src = sys.argv[1]
    crossings = []
    for top, dirs, files in os.walk(src):
        dirs.sort()
        rel_top = os.path.relpath(top, src)
        if rel_top == "vendor" or rel_top.startswith("vendor" + os.sep):
            continue
        for name in sorted(files):
            if not name.endswith((".c", ".h", ".def")):
                continue
            path = os.path.join(top, name)
            with open(path, encoding="utf-8") as f:
                for number, line in enumerate(f, 1):
                    m = INCLUDE.match(line)
                    if m:
                        crossings.append("%s:%d includes vendor/%s" % (os.path.relpath(path, src), number, m.group(1)))
    for c in crossings:
        print("FAIL " + c)
    scanned = sum(1 for _ in os.walk(src))
    if crossings:
        print("%d include(s) of src/vendor/ outside it: give the code that needs the vendor's types a home "
              "in src/vendor/ and its users gpuvet's types" % len(crossings))
        return 1
    print("ok: no file outside src/vendor/ includes a header of src/vendor/ (%d folders scanned)" % scanned)
    return 0


if __name__ == "__main__":
    sys.exit(main())
