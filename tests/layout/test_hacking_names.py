#!/usr/bin/env python3
"""HACKING.md stays true (issue 40): every file and folder it names in backticks exists, and
every macro or constant it names in backticks is defined or used somewhere in the tree. A
rename or a removal that forgets HACKING.md fails here, naming the line.

What counts as a name:
- a path from the repository root (`src/core/clock.h`, `tests/layout/`); one relative to
  src/ (`sys/nvml_facts.h`); in the table of "The tree", a file or folder of that row's
  folder or below it (`options.c` in the src/cmd/ row, `gpu/` in src/checks/'s);
- an upper-case identifier (`CHECK_NEEDS_NVML`, `CHECK(category_name)`, `NV_RC_*`: a prefix).
Names with a placeholder (`<name>`, `*.c`) and command lines are skipped.

Usage: test_hacking_names.py REPO_ROOT [HACKING.md]"""
import os
import re
import sys

CODE = re.compile(r"`([^`\n]+)`")
TOP = ("src/", "tests/", "tools/", "data/", "docs/", "kernels/", "deploy/", "perf/", "schema/", "man/",
       "completion/", "debian/", "packaging/")
FILE_EXT = (".c", ".h", ".def", ".py", ".sh", ".json", ".md", ".build", ".cu", ".cl")
MACRO = re.compile(r"^([A-Z][A-Z0-9_]{2,})(\*|\(.*\))?$")
SEARCHED = ("src", "tests", "tools", "meson.build", "meson_options.txt", "kernels", "data")


def tree_words(root):
    """Every identifier-like word in the searched parts of the tree, for the macro check."""
    words = set()
    for part in SEARCHED:
        path = os.path.join(root, part)
        files = [path] if os.path.isfile(path) else [
            os.path.join(top, f) for top, _, fs in os.walk(path) for f in fs]
        for f in files:
            try:
                with open(f, encoding="utf-8", errors="replace") as fh:
                    words.update(re.findall(r"[A-Z][A-Z0-9_]+", fh.read()))
            except OSError:
                pass
    return words


def found_below(folder, name):
    """Whether name (a file, or a folder ending in /) is in folder or any folder below it."""
    want_dir = name.endswith("/")
    base = name.rstrip("/")
    if os.path.exists(os.path.join(folder, base)):
        return True
    for top, dirs, files in os.walk(folder):
        if (base in dirs) if want_dir else (base in files):
            return True
    return False


def main():
    root = sys.argv[1]
    hacking = sys.argv[2] if len(sys.argv) > 2 else os.path.join(root, "HACKING.md")
    words = tree_words(root)
    wrong = []
    checked = 0
    with open(hacking, encoding="utf-8") as f:
        lines = f.read().splitlines()
    for number, line in enumerate(lines, 1):
        row = re.match(r"^\|\s*`([^`]+/)`\s*\|", line)
        row_folder = os.path.join(root, row.group(1)) if row and row.group(1).startswith(TOP) else None
        for token in CODE.findall(line):
            token = token.strip()
            if any(c in token for c in "<>*[] ") and not MACRO.match(token):
                continue
            if token.startswith(TOP):
                checked += 1
                if not os.path.exists(os.path.join(root, token)):
                    wrong.append("HACKING.md:%d: `%s` is not in the tree" % (number, token))
                continue
            macro = MACRO.match(token)
            if macro:
                checked += 1
                name = macro.group(1)
                if macro.group(2) == "*":
                    ok = any(w.startswith(name) for w in words)
                else:
                    ok = name in words
                if not ok:
                    wrong.append("HACKING.md:%d: `%s` is defined or used nowhere in the tree" % (number, token))
                continue
            if "/" in token.rstrip("/") and token.endswith(FILE_EXT) and not token.startswith(("-", ".")):
                checked += 1
                if not os.path.exists(os.path.join(root, "src", token)):
                    wrong.append("HACKING.md:%d: `%s` is not in src/" % (number, token))
                continue
            if row_folder and (token.endswith(FILE_EXT) or re.match(r"^[a-z_]+/$", token)):
                checked += 1
                # a file named after a path in the same line ("`src/cmd/a.c` and `b.c`") is
                # that path's neighbour
                near = [os.path.dirname(os.path.join(root, p)) for p in CODE.findall(line)
                        if p.startswith(TOP) and p.endswith(FILE_EXT)]
                if not found_below(row_folder, token) and not any(
                        os.path.exists(os.path.join(d, token)) for d in near):
                    wrong.append("HACKING.md:%d: `%s` is not in %s" % (number, token, row.group(1)))
    for w in wrong:
        print("FAIL " + w)
    if wrong:
        print("%d name(s) in HACKING.md that the tree does not have: make HACKING.md true again" % len(wrong))
        return 1
    print("ok: the %d files, folders and macros HACKING.md names exist" % checked)
    return 0


if __name__ == "__main__":
    sys.exit(main())
