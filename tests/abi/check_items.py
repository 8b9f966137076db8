#!/usr/bin/env python3
"""Check that tests/abi/abi_items.def lists every item src/bindings/nvml_api.h declares.

The ABI test only compares what abi_items.def names, so a field or constant added to
nvml_api.h without a line there would go unchecked against the official nvml.h. This
reads nvml_api.h the simple way its style allows (one declaration per line) and lists
what is missing; --print writes the complete list instead.

usage: check_items.py NVML_API_H ABI_ITEMS_DEF [--print]
"""
import re
import sys


def expected_items(text):
    """The ABI_* lines nvml_api.h calls for, in its order."""
    text = re.sub(r"/\*.*?\*/", "", text, flags=re.S)
    items = []
    struct_fields = None
    in_enum = False
    nested = False  # inside an anonymous struct member: its closing line names the member
    for line in text.splitlines():
        s = line.strip()
        if struct_fields is not None and re.fullmatch(r"struct\s*\{", s):
            nested = True
            continue
        if nested:
            m = re.match(r"\}\s*(\w+)\s*;", s)
            if m:
                struct_fields.append(m.group(1))
                nested = False
            continue
        m = re.match(r"#define\s+(\w+)\b(?!\()", s)
        if m and m.group(1) != "NVML_FN":
            items.append(f"ABI_DEFINE({m.group(1)})")
            continue
        if re.match(r"typedef\s+(struct|enum)\b[^;]*\{", s):
            struct_fields = [] if s.startswith("typedef struct") else None
            in_enum = s.startswith("typedef enum")
            continue
        m = re.match(r"\}\s*([\w\s,]+);", s)
        if m:
            names = [n.strip() for n in m.group(1).split(",")]
            for n in names:
                items.append(f"ABI_SIZE({n})")
            if struct_fields is not None:
                items += [f"ABI_OFFSET({names[0]}, {f})" for f in struct_fields]
            struct_fields = None
            in_enum = False
            continue
        m = re.match(r"typedef\s+(unsigned\s+|signed\s+)?(char|short|int|long long|long)\s+(\w+);", s)
        if m:
            items.append(f"ABI_SCALAR({m.group(3)})")
            continue
        if struct_fields is not None:
            m = re.match(r"[\w\s\*]+?\b(\w+)\s*(\[[^\]]*\])?\s*;", s)
            if m:
                struct_fields.append(m.group(1))
            continue
        if in_enum:
            m = re.match(r"(\w+)\s*=", s)
            if m:
                items.append(f"ABI_ENUM({m.group(1)})")
    return items


def listed_items(text):
    text = re.sub(r"/\*.*?\*/", "", text, flags=re.S)
    return {re.sub(r"\s+", " ", m.group(0)).replace("( ", "(")
            for m in re.finditer(r"ABI_\w+\([^)]*\)", text)}


def main():
    if len(sys.argv) not in (3, 4):
        print(__doc__.strip().splitlines()[-1], file=sys.stderr)
        return 2
    with open(sys.argv[1]) as f:
        want = expected_items(f.read())
    if len(sys.argv) == 4 and sys.argv[3] == "--print":
        print("\n".join(want))
        return 0
    with open(sys.argv[2]) as f:
        have = listed_items(f.read())
    missing = [w for w in want if w not in have]
    for w in missing:
        print(f"{sys.argv[2]}: missing {w} (declared in {sys.argv[1]})")
    if not want:
        print(f"{sys.argv[1]}: found no declarations; has its layout changed?")
        return 1
    print(f"{len(want)} items of {sys.argv[1]}: {len(want) - len(missing)} listed, {len(missing)} missing")
    return 1 if missing else 0


if __name__ == "__main__":
    sys.exit(main())
