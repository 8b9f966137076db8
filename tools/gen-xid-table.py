#!/usr/bin/env python3
"""Write data/xid.json from NVIDIA's Xid catalog and gpuvet's own part.

Inputs (data/sources/): the catalog's "Xids" sheet and its "XID 144-150 Decode" sheet as CSV
(xid-catalog-<date>.csv, xid-catalog-<date>-nvlink5-decode.csv: the newest date is used), and
xid-gpuvet.json (gpuvet's severity and remedy per resolution bucket, its names and remedies for
single codes, a resolution for the codes the catalog gives none). A catalog update is: save the
new sheets under a new date, run this, read the diff of data/xid.json.

  tools/gen-xid-table.py            rewrite data/xid.json
  tools/gen-xid-table.py --check    fail if data/xid.json differs, or if a catalog code is
                                    missing or an action has no remedy in gpuvet's vocabulary
"""
import csv
import glob
import json
import os
import re
import sys
from collections import OrderedDict

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SOURCES = os.path.join(ROOT, "data", "sources")
OUT = os.path.join(ROOT, "data", "xid.json")
CATALOG_URL = "https://docs.nvidia.com/deploy/xid-errors/analyzing-xid-catalog.html"


def rows(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(line for line in f if not line.startswith("#")))


def newest(pattern):
    paths = sorted(p for p in glob.glob(os.path.join(SOURCES, pattern)) if re.search(r"\d{4}-\d\d-\d\d", p))
    if not paths:
        sys.exit("gen-xid-table: no %s in %s" % (pattern, SOURCES))
    return paths[-1]


class Problems(list):
    def add(self, fmt, *args):
        self.append(fmt % args)


def build(problems):
    catalog_path = newest("xid-catalog-????-??-??.csv")
    date = re.search(r"(\d{4}-\d\d-\d\d)", os.path.basename(catalog_path)).group(1)
    decode_path = os.path.join(SOURCES, "xid-catalog-%s-nvlink5-decode.csv" % date)
    with open(os.path.join(SOURCES, "xid-gpuvet.json")) as f:
        local = json.load(f, object_pairs_hook=OrderedDict)
    buckets = local["resolutions"]
    codes = local["codes"]

    out = OrderedDict()
    out["schema"] = "gpuvet.xid/2"
    sources = OrderedDict(local["sources"])
    sources["nvidia_xid_catalog"] = OrderedDict(
        [("title", "NVIDIA, Analyzing Xid Errors with the Xid Catalog: sheets Xids and XID 144-150 Decode, "
                   "retrieved %s (data/sources/%s)" % (date, os.path.basename(catalog_path))),
         ("url", CATALOG_URL)])
    out["sources"] = sources
    out["severities"] = local["severities"]
    out["resolutions"] = buckets
    out["recovery_actions"] = local["recovery_actions"]

    xids = []
    seen = set()
    for r in rows(catalog_path):
        code = int(r["code"])
        seen.add(code)
        mine = codes.get(str(code), {})
        resolution = r["immediate_action"] or mine.get("resolution")
        if not resolution:
            problems.add("Xid %d: the catalog gives no immediate action and xid-gpuvet.json no resolution", code)
            continue
        if r["immediate_action"] and mine.get("resolution") and mine["resolution"] != r["immediate_action"]:
            problems.add("Xid %d: xid-gpuvet.json overrides the catalog's %s", code, r["immediate_action"])
        if resolution not in buckets:
            problems.add("Xid %d: action %s is not in gpuvet's remedy vocabulary (resolutions)", code, resolution)
        e = OrderedDict()
        e["code"] = code
        e["mnemonic"] = r["mnemonic"]
        desc = r["description"]
        e["name"] = mine.get("name") or ("Unused: " + r["mnemonic"].lower() if desc == "Unused" else desc)
        e["resolution"] = resolution
        for k in ("severity", "action"):
            if k in mine:
                e[k] = mine[k]
        e["source"] = mine.get("source", "nvidia_xid_catalog")
        if "note" in mine:
            e["note"] = mine["note"]
        xids.append(e)
    for code in codes:
        if int(code) not in seen:
            problems.add("Xid %s: in xid-gpuvet.json but not in the catalog", code)
    out["xids"] = xids

    decode = []
    for r in rows(decode_path):
        for k in ("immediate_action", "action_2"):
            if r[k] and r[k] not in buckets:
                problems.add("Xid %s %s: action %s is not in gpuvet's remedy vocabulary", r["xid"], r["unit"], r[k])
        e = OrderedDict()
        e["xid"] = int(r["xid"])
        e["units"] = r["unit"].split("/")
        if r["error_status"]:
            e["error_status"] = int(r["error_status"], 16)
        if r["link_down_reason"]:
            e["link_down_reason"] = int(r["link_down_reason"])
        e["resolution"] = r["immediate_action"]
        if r["action_2"]:
            e["resolution_if_fatal"] = r["action_2"]
        e["severity"] = r["severity"]
        decode.append(e)
    out["nvlink5_decode"] = OrderedDict([("source", "nvidia_xid_catalog"), ("rows", decode)])
    return out


def render(doc):
    """One line per Xid and decode row, as the hand-kept file had it, so diffs stay readable."""
    parts = []
    for k, v in doc.items():
        if k == "xids":
            body = ",\n".join("    " + json.dumps(x, ensure_ascii=False) for x in v)
            parts.append('  "xids": [\n%s\n  ]' % body)
        elif k == "nvlink5_decode":
            body = ",\n".join("      " + json.dumps(x, ensure_ascii=False) for x in v["rows"])
            parts.append('  "nvlink5_decode": {\n    "source": %s,\n    "rows": [\n%s\n    ]\n  }'
                         % (json.dumps(v["source"]), body))
        elif isinstance(v, dict):
            body = ",\n".join("    %s: %s" % (json.dumps(kk), json.dumps(vv, ensure_ascii=False)) for kk, vv in v.items())
            parts.append("  %s: {\n%s\n  }" % (json.dumps(k), body))
        else:
            parts.append("  %s: %s" % (json.dumps(k), json.dumps(v, ensure_ascii=False)))
    return "{\n" + ",\n".join(parts) + "\n}\n"


def main():
    check = sys.argv[1:] == ["--check"]
    problems = Problems()
    text = render(build(problems))
    for p in problems:
        print("gen-xid-table: " + p, file=sys.stderr)
    if problems:
        return 1
    if check:
        with open(OUT) as f:
            if f.read() != text:
                print("gen-xid-table: data/xid.json is not what tools/gen-xid-table.py writes: run it", file=sys.stderr)
                return 1
        return 0
    with open(OUT, "w") as f:
        f.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
