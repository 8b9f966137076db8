#!/usr/bin/env python3
"""Golden tests of `gpuvet estimate` (docs/estimate.md):

- text and JSON answers for presets and a command-line shape, training and inference, fits
  and does-not-fit with its suggestions, the GPU named (--gpu) or found on a fixture (--root)
- every bad value exits 2 naming its option
- a broken models.json under --data-dir exits 2 naming the file and the problem

    test_estimate.py GPUVET

Outputs are compared with tests/golden/expected-estimate/<case>.{txt,json}; the figures the
cases exist for are asserted on their own, so a golden rewritten by mistake still fails.
GPUVET_UPDATE_GOLDEN=1 rewrites the expected files. Exit 0 when all hold."""

import difflib
import json
import os
import shutil
import subprocess
import sys
import tempfile
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "fixtures"))
import fixture_cache  # noqa: E402  (the shared fixture trees)

HERE = os.path.dirname(os.path.abspath(__file__))
EXPECTED = os.path.join(HERE, "expected-estimate")
DATA = os.path.join(HERE, "..", "..", "data")
H100 = ["--gpu", "NVIDIA H100 80GB HBM3"]

# name, arguments, exit status
CASES = [
    ("llama2-70b-train-fits", ["--model", "llama-2-70b", "--tp", "8", "--dp", "4", "--zero", "1",
                               "--recompute", "selective", "--tokens", "2T"] + H100, 0),
    ("llama2-70b-infer-1gpu", ["--model", "llama-2-70b", "--infer"] + H100, 1),
    ("llama31-405b-train-combined", ["--model", "llama-3.1-405b", "--tp", "8", "--dp", "8", "--global-batch", "512"] + H100,
     1),
    ("llama2-7b-train-1gpu", ["--model", "llama-2-7b", "--micro-batch", "4"] + H100, 1),
    ("mixtral-infer", ["--model", "mixtral-8x7b", "--infer", "--tp", "2", "--batch", "8", "--seq", "8192"] + H100, 0),
    ("custom-shape", ["--layers", "24", "--hidden", "2048", "--heads", "16", "--vocab", "50257", "--seq", "1024",
                      "--micro-batch", "8", "--gpu", "NVIDIA A100-SXM4-40GB", "--precision", "fp16"], 1),
    # Mistral 7B's 4096-token window caps the KV cache at 32k context (0.54 GB a sequence,
    # not 4.3): 2 x 32 layers x 8 KV heads x 128 x 4096 x 2 bytes
    ("mistral-infer-window", ["--model", "mistral-7b", "--infer", "--seq", "32768", "--batch", "16"] + H100, 0),
    ("params-only", ["--params", "13B", "--zero", "3", "--dp", "8", "--gpu", "NVIDIA A100-SXM4-80GB"], 0),
    ("gpt3-megatron", ["--model", "gpt3-175b", "--tp", "8", "--pp", "16", "--dp", "8", "--micro-batch", "1",
                       "--global-batch", "1536", "--recompute", "full", "--gpu", "NVIDIA A100-SXM4-80GB",
                       "--tokens", "300B"], 0),
]

# arguments, text stderr must contain
BAD = [
    (["--model", "llama-9"], "--model: no preset \"llama-9\""),
    ([], "which model?"),
    (["--params", "7X"], "--params: expected a count from 1 to 1e18 (7B, 70e9, 1.5T), not \"7X\""),
    (["--params", "-7B"], "--params"),
    (["--params", "nan"], "--params"),
    (["--model", "llama-2-7b", "--layers", "4"], "give one"),
    (["--layers", "4", "--hidden", "64"], "a shape needs --layers, --hidden, --heads and --vocab"),
    (["--layers", "4", "--hidden", "64", "--heads", "5", "--vocab", "10"], "--heads 5: must divide --hidden 64"),
    (["--layers", "4", "--hidden", "64", "--heads", "4", "--kv-heads", "3", "--vocab", "10"], "--kv-heads 3"),
    (["--layers", "0", "--hidden", "64", "--heads", "4", "--vocab", "10"], "--layers: expected a whole number from 1 to 100000, not \"0\""),
    (["--model", "llama-2-7b", "--precision", "int4"], "--precision: expected bf16, fp16, fp8 or fp32, not \"int4\""),
    (["--model", "llama-2-7b", "--optimizer", "lion"], "--optimizer: expected adam, sgd or adafactor, not \"lion\""),
    (["--model", "llama-2-7b", "--recompute", "some"], "--recompute: expected none, selective or full, not \"some\""),
    (["--model", "llama-2-7b", "--zero", "4"], "--zero: expected a whole number from 0 to 3, not \"4\""),
    (["--model", "llama-2-7b", "--tp", "0"], "--tp: expected a whole number from 1 to 4096, not \"0\""),
    (["--model", "llama-2-7b", "--tp", "3"], "--tp 3: must divide the 32 attention heads"),
    (["--model", "llama-2-7b", "--pp", "64"], "--pp 64: more stages than the 32 layers"),
    (["--model", "llama-2-7b", "--dp", "x"], "--dp: expected a whole number from 1 to 1048576, not \"x\""),
    (["--model", "llama-2-7b", "--seq", "8192"], "--seq 8192: beyond Llama 2 7B's 4096-token context"),
    (["--model", "llama-2-7b", "--micro-batch", "3", "--dp", "2", "--global-batch", "8"],
     "--global-batch 8: must be a multiple of micro-batch x dp (3 x 2)"),
    (["--model", "llama-2-7b", "--mfu", "1.5"], "--mfu: expected a fraction above 0 and at most 1, not \"1.5\""),
    (["--model", "llama-2-7b", "--mfu", "0"], "--mfu: expected a fraction above 0 and at most 1, not \"0\""),
    (["--model", "llama-2-7b", "--tokens", "lots"], "--tokens: expected a count from 1 to 1e18 (300B, 2e12), not \"lots\""),
    (["--model", "llama-2-7b", "--infer", "--zero", "1"], "--zero is for training (--train) only"),
    (["--model", "llama-2-7b", "--batch", "4"], "--batch is for inference (--infer) only"),
    (["--model", "llama-2-7b", "--train", "--infer"], "--train and --infer: give one"),
    (["--model", "llama-2-7b", "--infer", "--fp32-grads"], "--fp32-grads is for training (--train) only"),
    (["--model", "llama-2-7b", "--gpu", "H100"], "--gpu: \"H100\" names"),
    (["--model", "llama-2-7b", "--gpu", "Voodoo 5"], "--gpu: no GPU of the table is called \"Voodoo 5\""),
    (["--model", "llama-2-7b", "--mlp", "gated"], "give one"),
    (["--model", "llama-2-7b", "--json", "/nonexistent-dir/x.json"], "--json"),
    (["--model", "mistral-7b", "--sliding-window", "-1"], "--sliding-window"),
]

failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL " + what)


def run(gpuvet, args, **kw):
    return subprocess.run([gpuvet, "estimate"] + args, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          universal_newlines=True, **kw)


def compare(name, got, update):
    path = os.path.join(EXPECTED, name)
    if update:
        with open(path, "w") as f:
            f.write(got)
        print("updated " + os.path.relpath(path))
        return
    try:
        with open(path) as f:
            want = f.read()
    except OSError as e:
        check(False, "%s: %s (GPUVET_UPDATE_GOLDEN=1 creates it)" % (name, e))
        return
    if got != want:
        sys.stdout.writelines(difflib.unified_diff(want.splitlines(True), got.splitlines(True),
                                                   "expected-estimate/" + name, "got"))
        check(False, name + ": differs from the golden file")
    else:
        print("ok   " + name)


def facts(name, doc):
    """What each case is for, asserted outside the golden files."""
    mem, comp = doc["memory_per_gpu"], doc["compute"]
    if name == "llama2-70b-train-fits":
        check(doc["verdict"] == "fits", name + ": fits on 32 H100s")
        # mixed-precision Adam, ZeRO 1 over 4: 2 + 2 + 12/4 bytes a parameter over TP 8
        n = doc["model"]["params"]
        check(abs(mem["weights"] + mem["gradients"] + mem["optimizer"] - n / 8 * 7) < 1e3, name + ": 7 B/param / 8")
        check(doc["config"]["gpus"] == 32, name + ": 32 GPUs")
    elif name == "llama2-70b-infer-1gpu":
        check(mem["kv_cache"] == 1.25 * 2 ** 30, name + ": KV cache 1.25 GiB at 4k (80 x 8 KV heads x 128)")
        check(doc["verdict"] == "does_not_fit", name + ": 138 GB of weights do not fit one H100")
        changes = [s["change"] for s in doc["suggestions"]]
        check(any(c.startswith("--tp 2") for c in changes), name + ": --tp 2 suggested: %s" % changes)
        check(comp["decode_tokens_per_second"] < comp["tokens_per_second"], name + ": decoding is memory bound")
    elif name == "llama31-405b-train-combined":
        check(doc["suggestions_combined"] is True and len(doc["suggestions"]) == 1, name + ": one combined change")
    elif name == "mixtral-infer":
        check(abs(doc["model"]["params"] - 46.7e9) < 0.1e9 and abs(doc["model"]["active_params"] - 12.9e9) < 0.1e9,
              name + ": 46.7B held, 12.9B a token")
        check(comp["flops_per_token"] < 2 * 13e9 + 4 * 32 * 4096 * 8192 + 1, name + ": FLOPs from active params")
    elif name == "gpt3-megatron":
        # Narayanan et al. 2021 trained GPT-3 on 1024 A100s at global batch 1536; 300B tokens
        check(doc["config"]["gpus"] == 1024 and doc["verdict"] == "fits", name + ": 1024 A100s, fits")
        check(comp["steps_per_epoch"] == -(-300e9 // (1536 * 2048)), name + ": steps per 300B tokens")
    elif name == "params-only":
        check(mem["activations"] is None and doc["model"]["shape"] is None, name + ": no shape, no activations")


def main(argv):
    if len(argv) != 2:
        sys.stderr.write("usage: test_estimate.py GPUVET\n")
        return 2
    gpuvet = os.path.abspath(argv[1])
    update = os.environ.get("GPUVET_UPDATE_GOLDEN") == "1"
    if update:
        os.makedirs(EXPECTED, exist_ok=True)
    for name, args, status in CASES:
        text = run(gpuvet, args)
        check(text.returncode == status, "%s: exit %d, expected %d: %s" % (name, text.returncode, status,
                                                                           text.stderr.strip()))
        compare(name + ".txt", text.stdout, update)
        proc = run(gpuvet, args + ["--json", "-"])
        check(proc.returncode == status, "%s --json -: exit %d" % (name, proc.returncode))
        try:
            doc = json.loads(proc.stdout)
        except ValueError as e:
            check(False, "%s: not JSON: %s" % (name, e))
            continue
        check(doc["schema"] == "gpuvet.estimate/1", name + ": schema")
        facts(name, doc)
        compare(name + ".json", json.dumps(doc, indent=2) + "\n", update)

    # The node's GPUs: the B300 fixture, 8 GPUs of 288 GB (tests/fixtures/machines.py).
    root = os.path.join(fixture_cache.ensure("hgx-b300"), "hgx-b300")
    proc = run(gpuvet, ["--model", "llama-3.1-70b", "--tp", "8", "--root", root, "--json", "-"])
    if proc.returncode != 0:
        check(False, "detected: exit %d: %s" % (proc.returncode, proc.stderr.strip()))
    else:
        gpu = json.loads(proc.stdout)["gpu"]
        check(gpu["from"] == "detected" and gpu["count_on_node"] == 8 and "B300" in gpu["name"],
              "detected: the fixture's 8 B300s: %s" % gpu)

    # --json FILE: the text as without it, and the JSON --json - gives, in FILE; --json alone
    # is --json -. --list-models the same way.
    args = ["--model", "llama-2-7b"] + H100
    text, alone, dash = run(gpuvet, args), run(gpuvet, args + ["--json"]), run(gpuvet, args + ["-j", "-"])
    check(alone.returncode == dash.returncode == 1 and alone.stdout == dash.stdout and alone.stdout.startswith("{"),
          "--json alone is --json -: %s" % alone.stderr.strip())
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "e.json")
        both = run(gpuvet, args + ["--json", path])
        written = open(path).read() if os.path.exists(path) else ""
    check(both.returncode == 1 and both.stdout == text.stdout and written == dash.stdout,
          "--json FILE: text on standard output, the JSON in FILE: %d %s" % (both.returncode, both.stderr.strip()))
    table = run(gpuvet, ["--list-models"])
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "models.json")
        both = run(gpuvet, ["--list-models", "--json", path])
        written = json.load(open(path)) if os.path.exists(path) else []
    check(both.returncode == 0 and both.stdout == table.stdout and "llama-2-7b" in [m["id"] for m in written],
          "--list-models --json FILE: the table, and the list in FILE: %s" % both.stderr.strip())

    for args, expected in BAD:
        proc = run(gpuvet, args + ["--gpu", "NVIDIA H100 80GB HBM3"] if "--gpu" not in args else args)
        check(proc.returncode == 2 and expected in proc.stderr and proc.stdout == "",
              "%s: exit %d, stderr %r (expected 2 and %r)" % (" ".join(args), proc.returncode, proc.stderr, expected))

    # A broken models.json under --data-dir: the file and the problem.
    with tempfile.TemporaryDirectory() as tmp:
        with open(os.path.join(DATA, "models.json")) as f:
            table = json.load(f)
        table["models"][2]["kv_heads"] = 7
        with open(os.path.join(tmp, "models.json"), "w") as f:
            json.dump(table, f)
        proc = run(gpuvet, ["--data-dir", tmp, "--model", "llama-2-7b"] + H100)
        want = os.path.join(tmp, "models.json") + ": model llama-2-70b: heads (64) must divide hidden (8192) " \
            "and kv_heads (7) divide heads"
        check(proc.returncode == 2 and want in proc.stderr, "broken models.json: %d %r" % (proc.returncode, proc.stderr))
        shutil.copy(os.path.join(DATA, "gpus.json"), tmp)  # gpus.json is read from the same directory
        with open(os.path.join(tmp, "models.json"), "w") as f:
            f.write('{"schema": "gpuvet.models/1",\n "models": [\n')
        proc = run(gpuvet, ["--data-dir", tmp, "--list-models"])
        check(proc.returncode == 2 and "models.json: line 3" in proc.stderr,
              "truncated models.json: %d %r" % (proc.returncode, proc.stderr))
    # --json FILE: the text on standard output, the same answer in the file.
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "estimate.json")
        proc = run(gpuvet, ["--model", "llama-2-7b", "--json", out] + H100)
        try:
            with open(out) as f:
                doc = json.load(f)
        except (OSError, ValueError) as e:
            doc = {"error": str(e)}
        check(proc.returncode == 1 and proc.stdout.startswith("model: Llama 2 7B") and
              doc.get("verdict") == "does_not_fit", "--json FILE: %d %r %s" % (proc.returncode, proc.stderr, doc))
    proc = run(gpuvet, ["--model", "llama-2-7b", "--root", "/nonexistent-root"])
    check(proc.returncode == 2 and "--root /nonexistent-root" in proc.stderr, "--root missing: %d" % proc.returncode)
    # --fp32-grads: 2 + 4 + 12 = 18 bytes a parameter (ZeRO's 16 with 4-byte gradients).
    proc = run(gpuvet, ["--params", "7.5B", "--fp32-grads", "--json", "-"] + H100)
    mem = json.loads(proc.stdout)["memory_per_gpu"] if proc.returncode in (0, 1) else {}
    check(mem.get("gradients") == 30e9 and mem.get("total") == 18 * 7.5e9, "--fp32-grads: %s" % mem)
    proc = run(gpuvet, ["--data-dir", "/nonexistent-data", "--list-models"])
    check(proc.returncode == 2 and "/nonexistent-data: No such file or directory" in proc.stderr,
          "--data-dir missing: %d %r" % (proc.returncode, proc.stderr))
    proc = run(gpuvet, ["--list-models"])
    check(proc.returncode == 0 and "mixtral-8x7b" in proc.stdout and "MoE" in proc.stdout, "--list-models")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
