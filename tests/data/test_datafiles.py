#!/usr/bin/env python3
"""The data files gpuvet judges by (data/gpus.json, compat.json, xid.json, baselines.json,
nics.json, and models.json, the presets of gpuvet estimate):

- each validates against its JSON schema in data/schema/;
- every "source" key resolves to an entry of the file's own "sources" table, and every
  entry there is used (a source nobody cites is a leftover);
- the files agree with each other: every architecture of gpus.json has a driver
  recommendation in compat.json and the same last branch there, every recommended
  branch is listed and supported, every GPU's architecture exists, every baseline names
  a GPU of the table, every Xid bucket exists and every code is listed once, every NIC's
  PCI id belongs to one model.

    test_datafiles.py SRCDIR

Exit 0 when all hold; each failure is printed with the file and the JSON path."""

import json
import os
import re
import sys

try:
    import jsonschema
except ImportError:  # Debian's python3-jsonschema, when the interpreter is not the system one
    sys.path.append("/usr/lib/python3/dist-packages")
    try:
        import jsonschema
    except ImportError:
        sys.exit("test_datafiles.py: the jsonschema module is missing: install python3-jsonschema "
                 "(tools/bootstrap.sh does)")
from jsonschema.validators import validator_for  # noqa: E402

failures = []


def fail(where, what):
    failures.append(where)
    print("FAIL %s: %s" % (where, what))


def load(path):
    with open(path) as f:
        return json.load(f)


def registry_for(schema_dir):
    """The schemas refer to common.schema.json by its $id: resolve it from the directory."""
    try:
        from referencing import Registry, Resource
    except ImportError:
        return None
    resources = []
    for name in os.listdir(schema_dir):
        if name.endswith(".schema.json"):
            doc = load(os.path.join(schema_dir, name))
            resources.append((doc["$id"], Resource.from_contents(doc)))
    return Registry().with_resources(resources)


def validate(name, doc, schema_dir):
    schema = load(os.path.join(schema_dir, name.replace(".json", ".schema.json")))
    cls = validator_for(schema)
    cls.check_schema(schema)
    registry = registry_for(schema_dir)
    if registry is not None:
        validator = cls(schema, registry=registry)
    else:  # jsonschema < 4.18: a RefResolver over the same directory
        store = {}
        for n in os.listdir(schema_dir):
            if n.endswith(".schema.json"):
                d = load(os.path.join(schema_dir, n))
                store[d["$id"]] = d
        validator = cls(schema, resolver=jsonschema.RefResolver.from_schema(schema, store=store))
    errors = sorted(validator.iter_errors(doc), key=lambda e: list(e.absolute_path))
    for e in errors[:20]:
        fail("%s:/%s" % (name, "/".join(str(p) for p in e.absolute_path)), e.message[:300])
    return not errors


def source_keys(node, path, out):
    if isinstance(node, dict):
        for k, v in node.items():
            if k == "source":
                for key in ([v] if isinstance(v, str) else v if isinstance(v, list) else []):
                    out.append((path + "/source", key))
            elif k != "sources":
                source_keys(v, "%s/%s" % (path, k), out)
    elif isinstance(node, list):
        for i, v in enumerate(node):
            source_keys(v, "%s/%d" % (path, i), out)


def check_sources(name, doc):
    table = doc.get("sources", {})
    cited = []
    source_keys(doc, "", cited)
    for where, key in cited:
        if key not in table:
            fail("%s:%s" % (name, where), "source %r is not in the file's sources table" % key)
    used = {key for _, key in cited}
    for key in table:
        if key not in used:
            fail("%s:/sources/%s" % (name, key), "listed but cited by no row")


def branch_number(b):
    return int(b[1:])


def check_consistency(gpus, compat, xid, baselines):
    archs = {a["id"]: a for a in gpus["architectures"]}
    for i, g in enumerate(gpus["gpus"]):
        if g["arch"] not in archs:
            fail("gpus.json:/gpus/%d" % i, "unknown architecture %r" % g["arch"])
        elif g["cc"].split(".")[0] != archs[g["arch"]]["cc"].split(".")[0]:
            fail("gpus.json:/gpus/%d" % i, "cc %s is not of architecture %s" % (g["cc"], g["arch"]))
    # Blackwell's fifth-generation Tensor Cores add FP4: a datacenter Blackwell row that
    # gives its FP8 peak gives its FP4 peak too, and FP4 runs at least as fast as FP8.
    for i, g in enumerate(gpus["gpus"]):
        t = g.get("tflops", {})
        if g["arch"] in ("blackwell", "blackwell_ultra") and g.get("datacenter") and "fp8" in t and "fp4" not in t:
            fail("gpus.json:/gpus/%d" % i, "%s gives an FP8 peak but no FP4 peak" % g["name"])
        if "fp4" in t and "fp8" in t and t["fp4"] < t["fp8"]:
            fail("gpus.json:/gpus/%d" % i, "%s: FP4 peak %s below its FP8 peak %s" % (g["name"], t["fp4"], t["fp8"]))
    seen = {}
    for i, g in enumerate(gpus["gpus"]):
        for dev in g["device_ids"]:
            for sub in g.get("subsystem_ids", [None]):
                if (dev, sub) in seen:
                    fail("gpus.json:/gpus/%d" % i, "device %s%s is also %s" % (dev, "/" + sub if sub else "", seen[(dev, sub)]))
                seen[(dev, sub)] = g["name"]
    branches = {b["branch"]: b for b in compat["driver_branches"]}
    recs = {r["arch"]: r for r in compat["recommendations"]}
    for arch_id, a in archs.items():
        r = recs.get(arch_id)
        if r is None:
            fail("compat.json:/recommendations", "no recommendation for architecture %s" % arch_id)
            continue
        if r.get("last_branch") != a.get("last_branch"):
            fail("compat.json:/recommendations/%s" % arch_id, "last_branch %r, gpus.json says %r"
                 % (r.get("last_branch"), a.get("last_branch")))
    for arch_id, r in recs.items():
        if arch_id not in archs:
            fail("compat.json:/recommendations/%s" % arch_id, "architecture not in gpus.json")
        b = branches.get(r["branch"])
        if b is None or not b.get("supported", True):
            fail("compat.json:/recommendations/%s" % arch_id, "recommends %s, which is not a supported branch" % r["branch"])
        if r.get("last_branch") and branch_number(r["branch"]) > branch_number(r["last_branch"]):
            fail("compat.json:/recommendations/%s" % arch_id, "recommends a branch past its last branch")
    names = {g["name"] for g in gpus["gpus"]}
    for i, b in enumerate(baselines["baselines"]):
        if b["gpu"] not in names:
            fail("baselines.json:/baselines/%d" % i, "GPU %r is not in gpus.json" % b["gpu"])
    codes = set()
    for i, x in enumerate(xid["xids"]):
        if x["code"] in codes:
            fail("xid.json:/xids/%d" % i, "Xid %d listed twice" % x["code"])
        codes.add(x["code"])
        if x["resolution"] not in xid["resolutions"]:
            fail("xid.json:/xids/%d" % i, "resolution %r is not in resolutions" % x["resolution"])
    for i, r in enumerate(xid.get("nvlink5_decode", {}).get("rows", [])):
        for k in ("resolution", "resolution_if_fatal"):
            if k in r and r[k] not in xid["resolutions"]:
                fail("xid.json:/nvlink5_decode/rows/%d" % i, "%s %r is not in resolutions" % (k, r[k]))


def check_ngc(ngc, compat):
    releases = {r["release"] for r in compat["ngc"]}
    toolkits = {t["cuda"] for t in compat["toolkits"]}
    names = set()
    for i, img in enumerate(ngc["images"]):
        where = "ngc.json:/images/%d" % i
        if img["name"] in names:
            fail(where, "image %s is listed twice" % img["name"])
        names.add(img["name"])
        if img["test"] not in ngc["tests"]:
            fail(where, "test %r is not in the tests table" % img["test"])
        rel = img["releases"]
        if rel.get("train") == "ngc":
            for key in ("from", "until"):
                if key in rel and rel[key] not in releases:
                    fail(where, "%s %s is not a release of compat.json's ngc" % (key, rel[key]))
        for j, r in enumerate(rel.get("list", [])):
            if "base" in r and r["base"] not in releases:
                fail("%s/releases/list/%d" % (where, j), "base %s is not a release of compat.json's ngc" % r["base"])
            if "cuda" in r and ".".join(r["cuda"].split(".")[:2]) not in toolkits:
                fail("%s/releases/list/%d" % (where, j), "CUDA %s is not a toolkit of compat.json" % r["cuda"])
        if "{os}" in img["tag"] and "os" not in img:
            fail(where, "the tag names {os} but the image has no os table")


def check_ansible_flavours(gpus, srcdir):
    """The Ansible role installs the module flavour of each architecture from its own copy
    of gpus.json's kernel_modules (vars/architectures.yml): the two must not drift apart."""
    path = os.path.join(srcdir, "deploy", "ansible", "roles", "gpu_baseline", "vars", "architectures.yml")
    role = {}
    with open(path) as f:
        for line in f:
            m = re.match(r"^  ([a-z_]+): \[([a-z, ]*)\]\s*$", line)
            if m:
                role[m.group(1)] = sorted(x.strip() for x in m.group(2).split(",") if x.strip())
    for a in gpus["architectures"]:
        want = sorted(a.get("kernel_modules", []))
        if role.get(a["id"]) != want:
            fail("architectures.yml:%s" % a["id"], "module flavours %r, gpus.json says %r" % (role.get(a["id"]), want))


def main(argv):
    if len(argv) != 2:
        sys.stderr.write("usage: test_datafiles.py SRCDIR\n")
        return 2
    data = os.path.join(argv[1], "data")
    schema_dir = os.path.join(data, "schema")
    docs = {}
    for name in ("gpus.json", "compat.json", "xid.json", "baselines.json"):
        docs[name] = load(os.path.join(data, name))
        if validate(name, docs[name], schema_dir):
            print("ok   %s matches %s" % (name, name.replace(".json", ".schema.json")))
        check_sources(name, docs[name])
    check_consistency(docs["gpus.json"], docs["compat.json"], docs["xid.json"], docs["baselines.json"])
    check_ansible_flavours(docs["gpus.json"], argv[1])
    # models.json (gpuvet estimate's presets) stands alone: its schema and its sources.
    models = load(os.path.join(data, "models.json"))
    if validate("models.json", models, schema_dir):
        print("ok   models.json matches models.schema.json")
    check_sources("models.json", models)
    # nics.json (the RDMA NICs the network checks know) stands alone too.
    nics = load(os.path.join(data, "nics.json"))
    if validate("nics.json", nics, schema_dir):
        print("ok   nics.json matches nics.schema.json")
    check_sources("nics.json", nics)
    seen = {}
    for i, n in enumerate(nics["nics"]):
        for dev in n["device_ids"]:
            key = (n["vendor"], dev)
            if key in seen:
                fail("nics.json:/nics/%d" % i, "device %s:%s is also %s" % (n["vendor"], dev, seen[key]))
            seen[key] = n["name"]
    # ngc.json (gpuvet ngc's catalogue): its schema, its sources, and what it names in
    # compat.json (the release trains, a NeMo release's base) and in its own tests table.
    ngc = load(os.path.join(data, "ngc.json"))
    if validate("ngc.json", ngc, schema_dir):
        print("ok   ngc.json matches ngc.schema.json")
    check_sources("ngc.json", ngc)
    check_ngc(ngc, docs["compat.json"])
    # fleet_rules.json (gpuvet fleet's outlier rules) has no sources: its thresholds are
    # policy, explained in its "about" and each entry's "note".
    rules = load(os.path.join(data, "fleet_rules.json"))
    if validate("fleet_rules.json", rules, schema_dir):
        print("ok   fleet_rules.json matches fleet_rules.schema.json")
    if not failures:
        print("ok   sources resolve and the files agree")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
