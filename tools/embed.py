#!/usr/bin/env python3
"""Turn a data file into a C source defining a NUL-terminated byte array and its length."""
import sys

src, out, symbol = sys.argv[1:4]
data = open(src, "rb").read()
with open(out, "w") as f:
    f.write("/* generated from %s by tools/embed.py; do not edit */\n" % src.split("/")[-1])
    f.write("#include <stddef.h>\n")
    f.write("const char %s[] = {\n" % symbol)
    for i in range(0, len(data), 16):
        f.write("  " + ", ".join("0x%02x" % b for b in data[i:i + 16]) + ",\n")
    f.write("  0x00\n};\n")
    f.write("const size_t %s_len = %d;\n" % (symbol, len(data)))
