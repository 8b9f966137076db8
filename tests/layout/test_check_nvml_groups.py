#!/usr/bin/env python3
"""check reads only the NVML groups of CHECK_NVML_GROUPS (src/checks/check.h): the groups
it leaves out must hold no fact a check judges or check's report writes.

    test_check_nvml_groups.py SRCDIR

From src/bindings/nvml_facts.c: the reader of each group (the readers[] table) and the
nvml_gpu fields it fills (g->FIELD, or offsetof(struct nvml_gpu, FIELD) in its tables).
From src/checks/check.h: the groups CHECK_NVML_GROUPS leaves out. Then every file under
src/checks/, and the report and policy code check runs, must not name a field of a left-out
group (->FIELD or .FIELD). Exit 0 when none does, 1 naming each file and field."""
import os
import re
import sys


def main():
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    src = sys.argv[1]
    facts = open(os.path.join(src, "bindings", "nvml_facts.c")).read()
    readers = dict(re.findall(r"\{NVML_GROUP_(\w+), (\w+)\}", facts))
    if len(readers) < 20:
        print("found only %d readers in nvml_facts.c's readers[] table" % len(readers))
        return 1
    check_h = open(os.path.join(src, "checks", "check.h")).read()
    m = re.search(r"#define CHECK_NVML_GROUPS(.*?)\n\n", check_h, re.S)
    if not m:
        print("no CHECK_NVML_GROUPS in src/checks/check.h")
        return 1
    left_out = re.findall(r"NVML_GROUP_(\w+)", m.group(1))
    if not left_out:
        print("CHECK_NVML_GROUPS leaves out no group: nothing to check, or the macro changed shape")
        return 1

    def fields_of(reader):
        body = re.search(r"\nstatic void " + reader + r"\(.*?\n\}\n", facts, re.S)
        if not body:
            raise SystemExit("no body for %s in nvml_facts.c" % reader)
        found = set(re.findall(r"\bg->(\w+)", body.group(0)))
        found |= set(re.findall(r"offsetof\(struct nvml_gpu, (\w+)\)", body.group(0)))
        return found - {"index", "device"}

    judged_by = []
    for root, _, files in os.walk(os.path.join(src, "checks")):
        judged_by += [os.path.join(root, f) for f in files if f.endswith(".c")]
    judged_by += [os.path.join(src, "report", "report_json.c"), os.path.join(src, "report", "report_text.c")]
    judged_by += [os.path.join(src, "policy", f) for f in os.listdir(os.path.join(src, "policy")) if f.endswith(".c")]
    texts = {path: open(path).read() for path in judged_by if os.path.exists(path)}

    problems = []
    for group in left_out:
        if group not in readers:
            problems.append("CHECK_NVML_GROUPS names NVML_GROUP_%s, which has no reader" % group)
            continue
        fields = fields_of(readers[group])
        if not fields:
            problems.append("NVML_GROUP_%s: found no field its reader %s fills" % (group, readers[group]))
        for field in sorted(fields):
            for path, text in texts.items():
                if re.search(r"(->|\.)" + field + r"\b", text):
                    problems.append("%s uses %s, read by NVML_GROUP_%s, which check does not read "
                                    "(CHECK_NVML_GROUPS)" % (os.path.relpath(path, src), field, group))
    for p in problems:
        print("FAIL " + p)
    print("%d groups left out of check's NVML reads, %d files checked: %s" %
          (len(left_out), len(texts), "ok" if not problems else "%d problems" % len(problems)))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
