#!/usr/bin/env python3
"""The layers of src/ (HACKING.md, "Layers"; the table is src/meson.build's `layers`): each
folder may use only the folders below it, so that a lower layer builds, links and is tested
without the ones above. Two views of the same rule, each failing naming every crossing:

  includes  every #include "folder/..." of a file under src/ names its own folder or one
            of a lower layer (the few interface headers a lower layer implements for its
            user above are listed in INTERFACES);
  symbols   with BUILD_DIR: each object of libgpuvet.a and libgpuvet_tui.a refers to no symbol
            that only an object of a higher layer defines (nm -u against nm --defined-only),
            which catches a call that declares its callee by hand.

Usage: test_layers.py SRC_DIR [BUILD_DIR]"""
import os
import re
import subprocess
import sys

MAIN = "main.c"  # above every layer: it only calls cmd/


def read_layers(src):
    """The table of src/meson.build (layers = [ ['core'], ... ]), lowest first, with
    src/main.c on top. The libraries are built from the same table (meson.build)."""
    with open(os.path.join(src, "meson.build"), encoding="utf-8") as f:
        text = f.read()
    m = re.search(r"^layers = \[\n(.*?)^\]", text, re.M | re.S)
    if not m:
        sys.exit("FAIL src/meson.build has no layers = [...] table")
    layers = [re.findall(r"'([a-z]+)'", row) for row in re.findall(r"\[([^\[\]]*)\]", m.group(1))]
    return layers + [[MAIN]]


LAYERS = []

# Interfaces that sit with their user (HACKING.md, "The tree": src/bindings/): the layer
# below implements them and includes them for that alone.
INTERFACES = {
    ("bindings", "bench/device.h"),
    ("bindings", "bench/cuda_raw.h"),
    ("bindings", "bench/kernels.def"),
    ("bindings", "bench/matmul.h"),
    ("bindings", "bench/collective.h"),
    ("bindings", "bench/rdma_endpoint.h"),
    ("bindings", "tune/gpu.h"),
}

INCLUDE = re.compile(r'^\s*#\s*include\s+"([a-z_]+)/([^"]+)"')


def layer_of(folder):
    for i, names in enumerate(LAYERS):
        if folder in names:
            return i
    return None


def folder_of(rel):
    """src-relative path to its top folder ("checks/gpu/ecc.c" -> "checks", "main.c")."""
    return rel.split(os.sep)[0]


def allowed(own, used, header):
    if own == used:
        return True
    if (own, "%s/%s" % (used, header)) in INTERFACES:
        return True
    lo, lu = layer_of(own), layer_of(used)
    return lo is not None and lu is not None and lu < lo


def check_includes(src):
    crossings, unknown = [], set()
    for top, dirs, files in os.walk(src):
        dirs.sort()
        for name in sorted(files):
            if not name.endswith((".c", ".h", ".def")):
                continue
            path = os.path.join(top, name)
            rel = os.path.relpath(path, src)
            own = folder_of(rel)
            if layer_of(own) is None:
                unknown.add(own)
                continue
            with open(path, encoding="utf-8") as f:
                for number, line in enumerate(f, 1):
                    m = INCLUDE.match(line)
                    if not m or not os.path.isdir(os.path.join(src, m.group(1))):
                        continue
                    used = m.group(1)
                    if layer_of(used) is None:
                        unknown.add(used)
                    elif not allowed(own, used, m.group(2)):
                        crossings.append("%s:%d includes %s/%s (layer %s includes layer %s)" %
                                         (rel, number, used, m.group(2), own, used))
    return crossings, unknown


OBJECT = re.compile(r"^src_([a-z]+)_.*\.o$")


def archive_symbols(args, archive):
    """(object, symbol) for each line of nm -A over the archive's members."""
    out = subprocess.run(["nm", "-A"] + args + [archive], check=True, capture_output=True, text=True).stdout
    for line in out.splitlines():
        head, _, rest = line.rpartition(":") if line.count(":") >= 2 else ("", "", "")
        member = os.path.basename(head.split(":")[-1])
        fields = rest.split()
        if member and fields:
            yield member, fields[-1]


def check_symbols(build):
    archives = [os.path.join(build, a) for a in ("libgpuvet.a", "libgpuvet_tui.a")]
    if not all(os.path.isfile(a) for a in archives):
        return None
    definers, uses = {}, []
    for archive in archives:
        for member, sym in archive_symbols(["--defined-only", "--extern-only"], archive):
            m = OBJECT.match(member)
            if m and layer_of(m.group(1)) is not None:
                definers.setdefault(sym, set()).add(m.group(1))
        for member, sym in archive_symbols(["-u"], archive):
            m = OBJECT.match(member)
            if m and layer_of(m.group(1)) is not None:
                uses.append((m.group(1), member, sym))
    crossings = []
    for folder, member, sym in uses:
        where = definers.get(sym)
        if not where or folder in where or any(layer_of(w) < layer_of(folder) for w in where):
            continue
        crossings.append("%s refers to %s, defined in %s" % (member, sym, ", ".join(sorted(where))))
    return sorted(set(crossings))


def main():
    src = sys.argv[1]
    LAYERS.extend(read_layers(src))
    crossings, unknown = check_includes(src)
    failed = False
    for u in sorted(unknown):
        print("FAIL src/%s is in no layer: add it to src/meson.build's layers and HACKING.md's table" % u)
        failed = True
    for c in crossings:
        print("FAIL " + c)
        failed = True
    symbols = check_symbols(sys.argv[2]) if len(sys.argv) > 2 else None
    for c in symbols or []:
        print("FAIL " + c)
        failed = True
    if failed:
        print("an upward use: move what the lower layer needs down to it (HACKING.md, \"Layers\")")
        return 1
    print("ok: every include%s goes down the layers (%d layers)" %
          (" and every symbol" if symbols is not None else "", len(LAYERS)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
