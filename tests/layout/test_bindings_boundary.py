#!/usr/bin/env python3
"""The bindings boundary (HACKING.md, "The tree"): only src/bindings/ includes a header of
src/bindings/ (NVML, CUDA, cuBLASLt and OpenCL declarations, their loaders and function
tables); the rest of src/ sees gpuvet's own types. Fails naming every file and line that
crosses it.

Usage: test_bindings_boundary.py SRC_DIR"""
import os
import re
import sys

INCLUDE = re.compile(r'^\s*#\s*include\s+"bindings/([^"]+)"')


def main():
    src = sys.argv[1]
    crossings = []
    for top, dirs, files in os.walk(src):
        dirs.sort()
        rel_top = os.path.relpath(top, src)
        if rel_top == "bindings" or rel_top.startswith("bindings" + os.sep):
            continue
        for name in sorted(files):
            if not name.endswith((".c", ".h", ".def")):
                continue
            path = os.path.join(top, name)
            with open(path, encoding="utf-8") as f:
                for number, line in enumerate(f, 1):
                    m = INCLUDE.match(line)
                    if m:
                        crossings.append("%s:%d includes bindings/%s" % (os.path.relpath(path, src), number, m.group(1)))
    for c in crossings:
        print("FAIL " + c)
    scanned = sum(1 for _ in os.walk(src))
    if crossings:
        print("%d include(s) of src/bindings/ outside it: give the code that needs the vendor's types a home "
              "in src/bindings/ and its users gpuvet's types" % len(crossings))
        return 1
    print("ok: no file outside src/bindings/ includes a header of src/bindings/ (%d folders scanned)" % scanned)
    return 0


if __name__ == "__main__":
    sys.exit(main())
