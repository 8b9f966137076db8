#!/usr/bin/env python3
"""The JSON Schemas of gpuvet's output documents (schema/*.schema.json) against what gpuvet
writes:

- every schema is a valid draft 2020-12 schema, and names the `schema` string it describes
  once;
- every document the golden tests keep (tests/golden/expected*/, html-inputs/, the real
  captures' expected reports) validates against the schema its `schema` string names, and a
  gpuvet document there without a schema file fails the test. The goldens leave out what
  changes from run to run (report: `root`, `summary.duration_ms`; detect: `root`,
  `gpuvet_version`); placeholders of the right type are put back first, so that the rest is
  validated whole;
- gpuvet run now on fixture machines (check, info, topo, detect, tune plan, apply (its
  snapshot) and status, burn on a capture, fleet over the goldens, estimate, detect
  --list-gpus, ngc, bench host-memory, and on the fakes bench nccl, train and rdma) writes
  documents that validate;
- a memory-only NUMA node's cpulist is "" and an unreadable one's null, as the schema says;
- with every fake library given, each schema validated at least one document, and
  docs/report-schema.md lists every schema file;
- a document with a field of the wrong type fails validation, and one with a field the
  schema does not name passes (fields are only ever added within a schema string).

    test_output_schemas.py GPUVET SOURCE_ROOT [cuda|nccl|nvml|verbs|cublaslt=FAKE_LIB ...]

With the fake libraries (tests/fakes) bench nccl, bench train, bench rdma (a server and a
client on 127.0.0.1) and ngc test (in the stand-in docker) run too.

Exit 0 when all hold; each failure is printed with the file and the JSON path."""

import copy
import glob
import json
import os
import shutil
import subprocess
import sys
import tempfile

try:
    import jsonschema
except ImportError:  # Debian's python3-jsonschema, when the interpreter is not the system one
    sys.path.append("/usr/lib/python3/dist-packages")
    try:
        import jsonschema  # noqa: F401
    except ImportError:
        sys.exit("test_output_schemas.py: the jsonschema module is missing: install python3-jsonschema "
                 "(tools/bootstrap.sh does)")
from jsonschema import Draft202012Validator  # noqa: E402
try:
    from referencing import Registry, Resource
except ImportError:  # jsonschema < 4.18 (Debian 12's 4.10): a RefResolver store instead
    Registry = None

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "fixtures"))
import fixture_cache  # noqa: E402  (the shared fixture trees)
sys.path.insert(0, os.path.join(HERE, "..", "fakes"))
import fakeenv  # noqa: E402  (free_port, time_scale)

PCI_IDS = os.path.join(HERE, "..", "fixtures", "pci.ids")
FIXTURES = ("dgx-h100", "cpu-only", "vfio-host", "a100-nouveau")

# What each golden drops before it is compared (run_golden.py, run_nvml.py, test_detect.py),
# put back with a value of its type.
RESTORE = {
    "gpuvet.report/1": lambda d: (d.setdefault("root", "/"), d.get("summary", {}).setdefault("duration_ms", 0)),
    "gpuvet.detect/1": lambda d: (d.setdefault("root", "/"), d.setdefault("gpuvet_version", "0")),
}

failures = []
validated = {}


def fail(where, what):
    failures.append(where)
    print("FAIL %s: %s" % (where, what))


def load_schemas(schema_dir):
    """{schema string: validator}, every schema checked against the metaschema; the schemas
    refer to each other by $id, resolved from the directory."""
    docs, store = {}, {}
    for path in sorted(glob.glob(os.path.join(schema_dir, "*.schema.json"))):
        name = os.path.relpath(path, schema_dir)
        with open(path) as f:
            doc = json.load(f)
        try:
            Draft202012Validator.check_schema(doc)
        except jsonschema.exceptions.SchemaError as e:
            fail(name, "not a valid draft 2020-12 schema: %s" % e.message)
            continue
        if doc.get("$schema") != "https://json-schema.org/draft/2020-12/schema":
            fail(name, "$schema is not draft 2020-12")
        store[doc["$id"]] = doc
        string = doc.get("properties", {}).get("schema", {}).get("const")
        if string is None:
            continue
        if string in docs:
            fail(name, "%s is described twice" % string)
        docs[string] = doc
    if Registry is None:
        return {s: Draft202012Validator(d, resolver=jsonschema.RefResolver.from_schema(d, store=store))
                for s, d in docs.items()}
    registry = Registry().with_resources((i, Resource.from_contents(d)) for i, d in store.items())
    return {s: Draft202012Validator(d, registry=registry) for s, d in docs.items()}


def validate(validators, where, doc, restore=False):
    string = doc.get("schema") if isinstance(doc, dict) else None
    if string not in validators:
        fail(where, "no schema/ file describes %r" % (string,))
        return
    if restore and string in RESTORE:
        RESTORE[string](doc)
    errors = sorted(validators[string].iter_errors(doc), key=lambda e: list(e.absolute_path))
    for e in errors[:10]:
        fail(where, "%s at /%s: %s" % (string, "/".join(str(p) for p in e.absolute_path), e.message[:300]))
    validated[string] = validated.get(string, 0) + 1


def kept_documents(srcdir):
    """The gpuvet documents the golden tests keep as expected output or as inputs they wrote."""
    paths = glob.glob(os.path.join(srcdir, "tests", "golden", "expected*", "**", "*.json"), recursive=True)
    paths += glob.glob(os.path.join(srcdir, "tests", "golden", "html-inputs", "*.json"))
    paths += glob.glob(os.path.join(srcdir, "tests", "captures", "*", "expected-*.json"))
    for path in sorted(paths):
        with open(path, encoding="utf-8") as f:
            doc = json.load(f)
        if isinstance(doc, dict) and str(doc.get("schema", "")).startswith("gpuvet."):
            yield path, doc


def run(gpuvet, args, ok=(0, 1), parse=True):
    """gpuvet's standard output as JSON (True unparsed), None (a failure noted) when it is not."""
    proc = subprocess.run([gpuvet] + args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True,
                          env=dict(os.environ, GPUVET_PCI_IDS=PCI_IDS), timeout=300)
    where = "gpuvet " + " ".join(args)
    if proc.returncode not in ok:
        fail(where, "exited %d: %s" % (proc.returncode, proc.stderr.strip()[-500:]))
        return None
    if not parse:
        return True
    try:
        return json.loads(proc.stdout)
    except ValueError as e:
        fail(where, "not JSON: %s: %r" % (e, proc.stdout[:200]))
        return None


def live_documents(gpuvet, srcdir, tmp, fakes):
    cache = fixture_cache.ensure(*FIXTURES)
    for name in FIXTURES:
        root = os.path.join(cache, name)
        for args in (["check", "--root", root, "--json", "-"],
                     ["info", "--root", root, "--json"],
                     ["topo", "--root", root, "--json"],
                     ["detect", "--root", root, "--json"],
                     ["tune", "plan", "--root", root, "--json"],
                     ["tune", "status", "--root", root, "--json"]):
            doc = run(gpuvet, args, ok=(0, 1) if args[0] == "check" or args[1] == "plan" else (0,))
            if doc is not None:
                yield "gpuvet %s (%s)" % (" ".join(a for a in args[:2] if not a.startswith("-")), name), doc
    # burn on a capture: the report with its burn object, not run
    doc = run(gpuvet, ["burn", "--root", os.path.join(cache, "cpu-only"), "-d", "1s", "--json", "-"], ok=(0, 1, 2))
    if doc is not None:
        yield "gpuvet burn (cpu-only capture)", doc
    # fleet over the kept check and bench reports: 21 nodes' check reports, one bench, one burn
    reports = sorted(glob.glob(os.path.join(srcdir, "tests", "golden", "expected", "*.json")) +
                     glob.glob(os.path.join(srcdir, "tests", "golden", "html-inputs", "*.json")))
    doc = run(gpuvet, ["fleet", "--json", "-"] + reports, ok=(0, 1, 4, 5))
    if doc is not None:
        yield "gpuvet fleet (the goldens)", doc
    doc = run(gpuvet, ["estimate", "--model", "llama-2-7b", "--infer", "--json", "-"], ok=(0, 1))
    if doc is not None:
        yield "gpuvet estimate --model llama-2-7b --infer (no GPU)", doc
    fake_cuda, fake_nccl, fake_nvml = fakes.get("cuda"), fakes.get("nccl"), fakes.get("nvml")
    if fake_cuda and fake_nccl:
        # bench nccl over the fake CUDA and NCCL (two devices, a short sweep)
        path = os.path.join(tmp, "nccl.json")
        env = {k: v for k, v in os.environ.items() if not k.startswith(("FAKE_", "NCCL_", "GPUVET_"))}
        env.update({"GPUVET_CUDA_LIB": fake_cuda, "GPUVET_NCCL_LIB": fake_nccl, "FAKE_CUDA_DEVICES": "2",
                    "FAKE_NCCL_LAT_US": "0"})
        proc = subprocess.run([gpuvet, "bench", "nccl", "--json", path, "-C", "all_reduce,all_gather", "-b", "1K", "-e",
                               "64K", "-n", "2", "-w", "0"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              universal_newlines=True, env=env, timeout=120)
        if proc.returncode not in (0, 1) or not os.path.exists(path):
            fail("gpuvet bench nccl", "exited %d: %s" % (proc.returncode, proc.stderr.strip()[-500:]))
        else:
            with open(path) as f:
                yield "gpuvet bench nccl (fake NCCL)", json.load(f)
    doc = run(gpuvet, ["detect", "--list-gpus", "--json"], ok=(0,))
    if doc is not None:
        yield "gpuvet detect --list-gpus", doc
    dgx = os.path.join(cache, "dgx-h100")
    for args in (["ngc", "list", "--json"], ["ngc", "pick", "--root", dgx, "--json"],
                 ["ngc", "pull", "pytorch", "--container-runtime", os.path.join(tmp, "no-docker"), "--root", dgx,
                  "--json"]):
        doc = run(gpuvet, args, ok=(0, 1))
        if doc is not None:
            yield "gpuvet " + " ".join(args[:2]), doc
    if fake_nvml:
        # ngc test in the stand-in docker (tests/fakes/fake_container_runtime.py) with the fake
        # NVML's eight H100: the whole test document
        nvml = os.path.join(tmp, "libnvidia-ml.so.1")
        shutil.copyfile(fake_nvml, nvml)
        env = {k: v for k, v in os.environ.items() if not k.startswith(("FAKE_", "GPUVET_"))}
        env.update(GPUVET_PCI_IDS=PCI_IDS, GPUVET_NVML_LIB=nvml, FAKE_CONTAINER_SCENARIO="ok",
                   FAKE_CONTAINER_LOG=os.path.join(tmp, "runtime-calls"),
                   FAKE_NVML_SCENARIO=os.path.join(HERE, "nvml-scenarios", "golden-h100-sxm-8gpu.scn"),
                   GPUVET_CONTAINER_RUNTIME=os.path.join(HERE, "..", "fakes", "fake_container_runtime.py"))
        proc = subprocess.run([gpuvet, "ngc", "test", "pytorch", "--root", dgx, "--json"], stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, universal_newlines=True, env=env, timeout=120)
        try:
            yield "gpuvet ngc test (stand-in docker)", json.loads(proc.stdout)
        except ValueError:
            fail("gpuvet ngc test", "exited %d, not JSON: %s" % (proc.returncode, proc.stderr.strip()[-500:]))
    if fake_cuda and fakes.get("cublaslt") and fake_nccl:
        # bench train on the fake CUDA and cuBLASLt: a two-layer model
        path = os.path.join(tmp, "train.json")
        env = {k: v for k, v in os.environ.items() if not k.startswith(("FAKE_", "GPUVET_"))}
        env.update(GPUVET_CUDA_LIB=fake_cuda, GPUVET_CUBLASLT_LIB=fakes["cublaslt"], GPUVET_NCCL_LIB=fake_nccl)
        tiny = ["--layers", "2", "--hidden", "64", "--heads", "4", "--seq", "32", "--micro-batch", "2",
                "--vocab", "128"]
        proc = subprocess.run([gpuvet, "bench", "train", "--json", path, "-b", "cuda", "-q"] + tiny,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True, env=env,
                              timeout=300)
        if proc.returncode not in (0, 1) or not os.path.exists(path):
            fail("gpuvet bench train", "exited %d: %s" % (proc.returncode, proc.stderr.strip()[-500:]))
        else:
            with open(path) as f:
                yield "gpuvet bench train (fake CUDA)", json.load(f)
    if fake_cuda and fakes.get("verbs"):
        for where, doc in rdma_pair(gpuvet, tmp, fake_cuda, fakes["verbs"]):
            yield where, doc
    path = os.path.join(tmp, "bench.json")
    if run(gpuvet, ["bench", "host-memory", "--size", "8M", "--reps", "1", "-q", "--json", path], parse=False):
        with open(path) as f:
            yield "gpuvet bench host-memory", json.load(f)


def rdma_pair(gpuvet, tmp, fake_cuda, fake_verbs):
    """bench rdma, a server and a client on 127.0.0.1 over the fake libibverbs: both documents."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("FAKE_", "GPUVET_"))}
    env.update(GPUVET_VERBS_LIB=fake_verbs, FAKE_VERBS_DEVICES="mlx5_0:ib:1x:SDR", GPUVET_CUDA_LIB=fake_cuda,
               FAKE_CUDA_DEVICES="2")
    port = fakeenv.free_port()
    small = ["--size", "64K", "-n", "4", "--lat-iters", "4"]
    paths = {role: os.path.join(tmp, "rdma-%s.json" % role) for role in ("server", "client")}
    server_log = open(os.path.join(tmp, "rdma-server.err"), "w+")  # a file: a pipe nobody reads could fill
    server = subprocess.Popen([gpuvet, "bench", "rdma", "--server", "--port", str(port), "--json", paths["server"]] +
                              small, stdout=subprocess.DEVNULL, stderr=server_log, env=env)
    client = None
    try:
        # the client retries its connection until the server listens (--connect-timeout)
        client = subprocess.run([gpuvet, "bench", "rdma", "--peer", "127.0.0.1:%d" % port, "--json", paths["client"]] +
                                small, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, universal_newlines=True,
                                env=env, timeout=120 * fakeenv.time_scale())
        server.wait(timeout=60 * fakeenv.time_scale())
    except subprocess.TimeoutExpired:
        fail("gpuvet bench rdma", "did not finish within its time")
    finally:
        if server.poll() is None:
            server.kill()
            server.wait()
    server_log.seek(0)
    server_err = server_log.read()
    server_log.close()
    for role in ("server", "client"):
        if not os.path.exists(paths[role]):
            said = (client.stderr if client else "") if role == "client" else server_err
            fail("gpuvet bench rdma --%s" % role, "no document: %s" % said[-500:])
            continue
        with open(paths[role]) as f:
            yield "gpuvet bench rdma (%s, fake verbs)" % role, json.load(f)


def memory_only_node(gpuvet, tmp):
    """A NUMA node with CPUs, one without (GPU or CXL memory: an empty cpulist) and one whose
    cpulist cannot be read: the report tells the three apart as the schema says ("0-47", "",
    null)."""
    root = fixture_cache.writable("cpu-only", os.path.join(tmp, "memory-only-node"), overlay=False)
    nodes = os.path.join(root, "sys", "devices", "system", "node")
    with open(os.path.join(nodes, "node0", "meminfo")) as f:
        meminfo = f.read()
    for node, cpulist in ((1, "\n"), (2, None)):
        os.makedirs(os.path.join(nodes, "node%d" % node))
        if cpulist is not None:
            with open(os.path.join(nodes, "node%d" % node, "cpulist"), "w") as f:
                f.write(cpulist)
        with open(os.path.join(nodes, "node%d" % node, "meminfo"), "w") as f:
            f.write(meminfo.replace("Node 0", "Node %d" % node))
    with open(os.path.join(nodes, "online"), "w") as f:
        f.write("0-2\n")
    doc = run(gpuvet, ["check", "--root", root, "--only", "numa", "--json", "-"])
    if doc is not None:
        got = [n.get("cpulist") for n in doc["host"]["numa_nodes"]]
        if got != ["0-47", "", None]:
            fail("memory-only NUMA node", "cpulist of nodes 0, 1 (memory only), 2 (unreadable): %r, want "
                 "['0-47', '', None]" % got)
    return root, doc


def tune_applied(gpuvet, root):
    """tune apply on a writable tree: its snapshot (gpuvet.tune-state/1), and tune status of
    what it applied."""
    if run(gpuvet, ["tune", "apply", "--root", root], ok=(0, 1), parse=False) is None:
        return
    state = os.path.join(root, "var", "lib", "gpuvet", "tune-state.json")
    try:
        with open(state) as f:
            yield "gpuvet tune apply's snapshot", json.load(f)
    except (OSError, ValueError) as e:
        fail("gpuvet tune apply", "no readable snapshot: %s" % e)
    doc = run(gpuvet, ["tune", "status", "--root", root, "--json"], ok=(0, 1))
    if doc is not None:
        yield "gpuvet tune status (after apply)", doc


def mutations(validators, docs):
    """A wrong type must fail, an added field must pass: the schemas constrain what they name
    and leave room for what a newer gpuvet adds."""
    for string, doc in docs.items():
        if string not in validators:
            continue
        v = validators[string]
        added = copy.deepcopy(doc)
        added["field_of_a_newer_gpuvet"] = {"any": [1, "thing"]}
        if not v.is_valid(added):
            fail("mutation " + string, "a document with an added top-level field does not validate")
        # the schema string's own type: every document has one
        wrong = copy.deepcopy(doc)
        wrong["schema"] = 1
        if v.is_valid(wrong):
            fail("mutation " + string, "\"schema\": 1 validates")
        if "summary" in doc and isinstance(doc["summary"], dict) and "pass" in doc["summary"]:
            wrong = copy.deepcopy(doc)
            wrong["summary"]["pass"] = str(wrong["summary"]["pass"])
            if v.is_valid(wrong):
                fail("mutation " + string, "summary.pass as a string validates")
            wrong = copy.deepcopy(doc)
            wrong["summary"]["verdict"] = "ok"
            if v.is_valid(wrong):
                fail("mutation " + string, "summary.verdict \"ok\" validates")
    report = docs.get("gpuvet.report/1")
    if report and report.get("checks") and report.get("gpus"):
        for path, value in ((("checks", 0, "status"), "ok"), (("checks", 0, "evidence"), ["not", "an", "object"]),
                            (("gpus", 0, "index"), "0"), (("host", "numa_nodes"), {}), (("checks", 0, "observed"), 3)):
            wrong = copy.deepcopy(report)
            target = wrong
            for key in path[:-1]:
                target = target[key]
            target[path[-1]] = value
            if validators["gpuvet.report/1"].is_valid(wrong):
                fail("mutation gpuvet.report/1", "/%s = %r validates" % ("/".join(map(str, path)), value))


def main(argv):
    if len(argv) < 3 or any("=" not in a for a in argv[3:]):
        sys.stderr.write("usage: test_output_schemas.py GPUVET SOURCE_ROOT "
                         "[cuda|nccl|nvml|verbs|cublaslt=FAKE_LIB ...]\n")
        return 2
    gpuvet, srcdir = os.path.abspath(argv[1]), os.path.abspath(argv[2])
    fakes = {a.split("=", 1)[0]: os.path.abspath(a.split("=", 1)[1]) for a in argv[3:]}
    validators = load_schemas(os.path.join(srcdir, "schema"))
    samples = {}
    for path, doc in kept_documents(srcdir):
        validate(validators, os.path.relpath(path, srcdir), doc, restore=True)
        samples.setdefault(doc["schema"], doc)
    with tempfile.TemporaryDirectory(prefix="gpuvet-schemas-") as tmp:
        for where, doc in live_documents(gpuvet, srcdir, tmp, fakes):
            validate(validators, where, doc)
            samples.setdefault(doc.get("schema"), doc)
        root, doc = memory_only_node(gpuvet, tmp)
        if doc is not None:
            validate(validators, "gpuvet check (a memory-only NUMA node)", doc)
        for where, doc in tune_applied(gpuvet, root):
            validate(validators, where, doc)
    mutations(validators, samples)
    with open(os.path.join(srcdir, "docs", "report-schema.md"), encoding="utf-8") as f:
        doc_text = f.read()
    every_fake = set(fakes) >= {"cuda", "nccl", "nvml", "verbs", "cublaslt"}
    for string in sorted(validators):
        print("%-24s %3d documents validated" % (string, validated.get(string, 0)))
        if every_fake and not validated.get(string):
            fail(string, "no document gpuvet wrote in this test exercised its schema")
    for path in sorted(glob.glob(os.path.join(srcdir, "schema", "*.schema.json"))):
        name = os.path.basename(path)
        if "(../schema/%s)" % name not in doc_text:
            fail(name, "docs/report-schema.md (\"Machine-readable schemas\") does not list it")
    if failures:
        print("%d failures" % len(failures))
        return 1
    print("ok: %d documents" % sum(validated.values()))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
