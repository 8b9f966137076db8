#!/usr/bin/env python3
"""`gpuvet bench train` (src/cmd/bench_train.c, src/bench/bench_train.c).

On the fake libcuda and cuBLASLt (tests/fakes/): every product runs at the fake's rate of
the heuristic's first algorithm (bf16 800 TFLOPS x 0.6 = 480), so the step's figure is 480
TFLOPS exactly and tokens/s follow from the model's FLOPs; on the fixture node (an H100
SXM, tests/golden/fixture_tree.py) that is an MFU of 480/989.5. The seed's baseline judges
the GPT-1.2B preset as it is on one GPU only (here a models.json whose megatron-1.2b is
small enough for the fake's host loops). A real preset's shapes plan and run with the
fake's big products timed, not computed (FAKE_CUBLASLT_MATH_LIMIT). On PoCL the step runs
for real on the CPU, verified, labelled as no GPU's and not judged. Bad options exit 2
naming the option; a hung matmul is an error within the deadline; wrong or corrupted
results fail; two GPUs run data parallel with the fake NCCL's all-reduce (its time from the
fake's latency and bus bandwidth, its sum verified, a wrong sum, a hang and NCCL missing
caught); --framework torch skips without torch or
python3, and its JSON contract is checked through a stand-in script (gpuvet-test-hooks'
GPUVET_TEST_TORCH_SCRIPT).

Usage: test_bench_train.py GPUVET GPUVET_TEST_HOOKS FAKE_LIBCUDA FAKE_LIBCUBLASLT FAKE_LIBNCCL DATA_DIR"""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fixture_tree  # noqa: E402

GPUVET, HOOKS, FAKE_CUDA, FAKE_LT, FAKE_NCCL, DATA = sys.argv[1:7]
SCALE = max(float(os.environ.get("GPUVET_TEST_TIME_SCALE", "1") or 1),
            float(os.environ.get("GPUVET_TEST_TIME_SCALE_BUILD", "1") or 1))
TINY = ["--layers", "2", "--hidden", "64", "--heads", "4", "--seq", "32", "--micro-batch", "2", "--vocab", "128"]
# 2 layers x 20447232 + logits 2*128*64*64*3 (tests/unit/test_train_shape.c works the layer by hand)
TINY_LAYER, TINY_LOGITS = 20447232.0, 3145728.0
TINY_MODEL = 2 * TINY_LAYER + TINY_LOGITS
H100_BF16 = 989.5
failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what)


def near(a, b, rel=1e-6):
    return a is not None and b is not None and abs(a - b) <= rel * abs(b)


def run(args, env=None, binary=None, timeout=120, json_out=True):
    e = {k: v for k, v in os.environ.items()
         if not k.startswith(("FAKE_CUDA_", "FAKE_CUBLASLT_", "GPUVET_"))}
    e["GPUVET_CUDA_LIB"] = FAKE_CUDA
    e["GPUVET_CUBLASLT_LIB"] = FAKE_LT
    e["GPUVET_NCCL_LIB"] = FAKE_NCCL
    e.update(env or {})
    with tempfile.NamedTemporaryFile(suffix=".json") as f:
        extra = ["--json", f.name] if json_out else []
        p = subprocess.run([binary or GPUVET, "bench", "train"] + extra + list(args), env=e, capture_output=True,
                           text=True, timeout=timeout * SCALE)
        try:
            report = json.load(open(f.name))
        except ValueError:
            report = None
    return p, report


def step_of(rep):
    for m in (rep or {}).get("measurements", []):
        if m["name"] == "step":
            return m
    return {}


def fakes(root):
    # --- text and JSON on the fake: 480 TFLOPS, the H100's peak, verified
    p, rep = run(TINY + ["-b", "cuda", "-n", "3", "-w", "1", "-r", root])
    check(p.returncode == 0, "tiny step exits 0, got %d: %s" % (p.returncode, p.stderr[-400:]))
    rep = rep or {}
    check(rep.get("schema") == "gpuvet.bench-train/1", "schema: %s" % rep.get("schema"))
    check(rep.get("precision") == "bf16" and rep.get("backend") == "cuda", "bf16 on cuda by default")
    model = rep.get("model", {})
    check(model.get("id") == "custom" and model.get("mlp") == "plain" and model.get("ffn") == 256 and
          model.get("kv_heads") == 4 and model.get("layers_run") == 2, "shape defaults: %s" % model)
    fl = rep.get("flops", {})
    check(near(fl.get("layer"), TINY_LAYER) and near(fl.get("logits"), TINY_LOGITS) and
          near(fl.get("model_step"), TINY_MODEL) and near(fl.get("proxy_step"), TINY_MODEL),
          "FLOPs by hand: %s" % fl)
    res = (rep.get("results") or [{}])[0]
    check(near(res.get("tflops"), 480.0), "480 TFLOPS on the fake: %s" % res.get("tflops"))
    check(near(res.get("mfu"), 480.0 / H100_BF16), "MFU against the H100's bf16 peak: %s" % res.get("mfu"))
    whole_ms = TINY_MODEL / 480e12 * 1e3
    check(near(res.get("whole_step_ms"), whole_ms) and near(res.get("tokens_per_s"), 64 / (whole_ms / 1e3)) and
          near(res.get("samples_per_s"), 2 / (whole_ms / 1e3)), "tokens/s from the FLOPs: %s" % res)
    check(res.get("verified") is True and res.get("status") == "pass" and res.get("cpu_device") is False,
          "verified, pass: %s" % res)
    st = step_of(rep)
    check(st.get("peak") == H100_BF16 and st.get("baseline") is None, "peak only: %s" % st.get("peak_source"))
    check("peak only" in rep.get("baseline_note", ""), "why no baseline: %s" % rep.get("baseline_note"))
    parts = {m["name"] for m in rep.get("measurements", [])}
    check({"step", "forward", "backward", "logits"} <= parts, "the parts are measured: %s" % parts)

    out = p.stdout  # the text report beside the JSON
    for want in ("achieved     480.00 TFLOPS", "MFU 48.5% of 990 TFLOPS", "verified     yes", "Verdict: PASS",
                 "custom (given shape): 2 layers, hidden 64"):
        check(want in out, "text shows %r:\n%s" % (want, out))

    # --- Llama-shaped: grouped KV heads and a gated MLP, its FLOPs GEMM by GEMM
    p, rep = run(["--layers", "2", "--hidden", "64", "--heads", "4", "--kv-heads", "2", "--ffn", "96", "--seq", "32",
                  "--micro-batch", "1", "--vocab", "64", "-b", "cuda", "-n", "2", "-w", "1"])
    model = (rep or {}).get("model", {})
    # qkv 64x(64+2*2*16) + proj 64x64 + gate and up 2x64x96 + down 96x64 weights, 32 tokens, 3x for the backward
    params = 64 * 128 + 64 * 64 + 2 * 64 * 96 + 96 * 64
    layer = 3 * (2 * 32 * params + 4 * 32 * 32 * 64)
    check(p.returncode == 0 and model.get("mlp") == "gated" and
          near((rep or {}).get("flops", {}).get("layer"), layer), "gated GQA layer: %s" % (rep or {}).get("flops"))

    # --- tf32 and fp8 on cc 9.0 (fp8 runs "TN" only, as the fake insists); fp8 skipped on 8.0
    # (fp16 and fp32 share bf16's code path: the types differ, not the calls)
    for prec, rate in (("tf32", 400), ("fp8", 1600)):
        p, rep = run(TINY + ["-b", "cuda", "-n", "2", "-w", "1", "-p", prec])
        res = ((rep or {}).get("results") or [{}])[0]
        check(p.returncode == 0 and near(res.get("tflops"), 0.6 * rate) and res.get("verified"),
              "%s at 0.6 x %d: %s %s" % (prec, rate, res, p.stderr[-200:]))
    p, rep = run(TINY + ["-b", "cuda", "-p", "fp8"], env={"FAKE_CUDA_CC": "8.0"})
    st = step_of(rep)
    check(p.returncode == 0 and st.get("status") == "skip" and "8.9" in st.get("summary", ""),
          "fp8 skipped on 8.0: %s" % st.get("summary"))

    # --- a real preset's shapes: the big products timed, not computed; the scores verified
    t0 = time.monotonic()
    p, rep = run(["--model", "megatron-1.2b", "--seq", "64", "--micro-batch", "1", "--layers-run", "1", "-b", "cuda",
                  "-n", "2", "-w", "1"], env={"FAKE_CUBLASLT_MATH_LIMIT": "10000000"})
    res = ((rep or {}).get("results") or [{}])[0]
    model = (rep or {}).get("model", {})
    check(p.returncode == 0 and near(res.get("tflops"), 480.0) and res.get("verified") and
          model.get("hidden") == 1536 and model.get("layers") == 40 and model.get("vocab") == 51200,
          "megatron-1.2b shapes on the fake: %s %s" % (res, p.stderr[-300:]))
    check("shape changed" in model.get("name", "") and "changed" in (rep or {}).get("baseline_note", ""),
          "a changed preset gets no baseline: %s" % (rep or {}).get("baseline_note"))
    check(time.monotonic() - t0 < 30 * SCALE, "the preset ran in seconds")


def baseline(root):
    """The seed's baseline judges the preset as it is, one GPU, 16-bit: a models.json whose
    megatron-1.2b is small, the H100's 178 TFLOPS from data/baselines.json."""
    with tempfile.TemporaryDirectory() as d:
        for name in os.listdir(DATA):
            if name.endswith(".json"):
                shutil.copy(os.path.join(DATA, name), d)
        models = json.load(open(os.path.join(DATA, "models.json")))
        for m in models["models"]:
            if m["id"] == "megatron-1.2b":
                m.update(layers=2, hidden=64, heads=4, kv_heads=4, ffn=256, vocab=128, max_seq=32)
        json.dump(models, open(os.path.join(d, "models.json"), "w"))
        for rate, want in (("300", "pass"), ("200", "fail")):  # 180 and 120 TFLOPS against 178
            p, rep = run(["--model", "megatron-1.2b", "--micro-batch", "2", "-b", "cuda", "-n", "2", "-w", "1",
                          "-r", root, "--data-dir", d], env={"FAKE_CUBLASLT_TFLOPS": "bf16=" + rate})
            st = step_of(rep)
            check(st.get("baseline") == 178 and st.get("status") == want and
                  (p.returncode == 0) == (want == "pass") and "seed" in st.get("baseline_source", "") + rep.get(
                      "baseline_note", ""), "seed baseline at bf16=%s: %s %s %s" % (
                          rate, st.get("status"), st.get("baseline"), st.get("summary")))
        p, rep = run(["--model", "megatron-1.2b", "--micro-batch", "2", "-b", "cuda", "-n", "2", "-w", "1", "-p",
                      "fp32", "-r", root, "--data-dir", d])
        check(step_of(rep).get("baseline") is None and "16-bit" in (rep or {}).get("baseline_note", ""),
              "fp32 is not the seed's configuration: %s" % (rep or {}).get("baseline_note"))


def faults(root):
    # --- a hung matmul becomes an error within the deadline
    t0 = time.monotonic()
    p, rep = run(TINY + ["-b", "cuda", "--timeout", "3"], env={"FAKE_CUBLASLT_HANG_DEVICE": "0"}, timeout=60)
    took = time.monotonic() - t0
    errors = [m["summary"] for m in (rep or {}).get("measurements", []) if m["status"] == "error"]
    check(p.returncode == 1 and any("timed out after 3 s" in e for e in errors),
          "a hang is an error: %d %s" % (p.returncode, errors))
    check(took < 15 * SCALE, "the hang ends within the deadline: %.1f s" % took)

    # --- wrong and corrupted results fail verification
    for env, what in (({"FAKE_CUBLASLT_WRONG": "1"}, "wrong K loop"), ({"FAKE_CUBLASLT_CORRUPT": "0:1:2"}, "D(1,2)")):
        p, rep = run(TINY + ["-b", "cuda", "-n", "2", "-w", "1"], env=env)
        st = step_of(rep)
        check(p.returncode == 1 and st.get("status") == "fail" and not st.get("verified") and
              "score.fwd" in st.get("verify_error", ""), "%s caught: %s" % (what, st.get("verify_error")))
    check("D(1,2)" in step_of(rep).get("verify_error", ""), "the corruption is placed")

    # --- two GPUs, data parallel: the gradients' all-reduce through the fake NCCL, whose time
    # is 10 us + the bus bytes S 2(n-1)/n over 400 GB/s (tests/fakes/fake_nccl.c); S is the
    # gradients of 2 layers and the logits in bf16
    two = {"FAKE_CUDA_DEVICES": "2"}
    grad_bytes = (2 * 49152 + 128 * 64) * 2
    p, rep = run(TINY + ["-b", "cuda", "-g", "0,1", "-n", "3", "-w", "1"], env=two)  # no peak: latency-bound
    res = (rep or {}).get("results") or []
    check(p.returncode == 0 and len(res) == 2, "two GPUs: %d %s" % (p.returncode, p.stderr[-300:]))
    ar_ms = (10e-6 + grad_bytes / 400e9) * 1e3
    for r in res:
        check(near(r.get("allreduce_ms"), ar_ms, 1e-4) and r.get("allreduce_verified") is True and r.get("verified"),
              "all-reduce %.6g ms expected, got %s" % (ar_ms, r))
        whole = TINY_MODEL / 480e12 * 1e3 + ar_ms  # 2 of 2 layers run: the all-reduce is the whole model's
        check(near(r.get("whole_step_ms"), whole, 1e-4), "whole step with the all-reduce: %s vs %.6g" % (
            r.get("whole_step_ms"), whole))
    check(near((rep or {}).get("node_tokens_per_s"), 2 * 64 / (TINY_MODEL / 480e12 + ar_ms / 1e3), 1e-4),
          "node tokens/s: %s" % (rep or {}).get("node_tokens_per_s"))
    check("not overlapped" in p.stdout and "Node       2 GPUs data parallel" in p.stdout, "text: all-reduce and node")
    p, rep = run(TINY + ["-b", "cuda", "-g", "0,1", "-n", "2", "-w", "1"], env=dict(two, FAKE_NCCL_WRONG="1"))
    bad = [m for m in (rep or {}).get("measurements", []) if m["name"] == "allreduce"]
    check(p.returncode == 1 and bad and all(m["status"] == "fail" and "after the all-reduce" in m["verify_error"]
                                            for m in bad), "a wrong all-reduce fails: %s" % [m["verify_error"] for m in bad])
    p, rep = run(TINY + ["-b", "cuda", "-g", "0,1"], env=dict(two, GPUVET_NCCL_LIB="/nonexistent/libnccl.so.2"))
    check(p.returncode == 1 and "need NCCL" in step_of(rep).get("summary", ""),
          "no NCCL: %s" % step_of(rep).get("summary"))
    t0 = time.monotonic()
    p, rep = run(TINY + ["-b", "cuda", "-g", "0,1", "--timeout", "3"], env=dict(two, FAKE_NCCL_HANG="ncclGroupEnd"))
    errors = [m["summary"] for m in (rep or {}).get("measurements", []) if m["status"] == "error"]
    check(p.returncode == 1 and any("timed out" in e for e in errors) and time.monotonic() - t0 < 15 * SCALE,
          "a hung all-reduce: %s" % errors)
    p, rep = run(TINY + ["-b", "opencl", "-g", "0,1"])
    check(p.returncode == 1 and "CUDA and NCCL" in step_of(rep).get("summary", ""), "OpenCL multi-device refused")

    # --- cuBLASLt missing: a skip naming it
    p, rep = run(TINY + ["-b", "cuda"], env={"GPUVET_CUBLASLT_LIB": "/nonexistent/libcublasLt.so.13"})
    check(p.returncode == 0 and step_of(rep).get("status") == "skip", "no cuBLASLt: %s" % step_of(rep).get("summary"))


def opencl():
    # --- PoCL for real: fp32, verified, a CPU's figures, not judged
    p, rep = run(TINY + ["-b", "opencl", "-n", "3", "-w", "1"], timeout=120)
    res = ((rep or {}).get("results") or [{}])[0]
    check(p.returncode == 0 and (rep or {}).get("precision") == "fp32" and res.get("verified") and
          res.get("cpu_device") is True and res.get("mfu") is None and res.get("tflops", 0) > 0,
          "PoCL step: %s %s" % (res, p.stderr[-300:]))
    check("not a GPU's" in p.stdout and "cpu0" in p.stdout, "the text labels a CPU's figures:\n" + p.stdout)
    p, rep = run(TINY + ["-b", "opencl", "-p", "bf16"])
    check(p.returncode == 0 and "fp32 only" in step_of(rep).get("summary", ""), "bf16 on OpenCL skipped")
    p, rep = run(TINY + ["-b", "opencl", "-n", "2", "-w", "1"], env={"GPUVET_TEST_CORRUPT_GEMM": "0:3:5"},
                 binary=HOOKS)
    st = step_of(rep)
    check(p.returncode == 1 and "D(3,5)" in st.get("verify_error", ""), "PoCL corruption: %s" % st.get("verify_error"))


def usage():
    bad = [
        (["--hidden", "0", "--layers", "2", "--heads", "4"], "--hidden"),
        (["--model", "megatron-1.2b", "--heads", "x"], "--heads"),
        (["--model", "megatron-1.2b", "-p", "fp64"], "-p: expected bf16"),
        (["--model", "megatron-1.2b", "--framework", "jax"], "--framework"),
        (["--model", "megatron-1.2b", "--mlp", "moe"], "--mlp"),
        (["--model", "no-such-model"], "--model"),
        (["--model", "mixtral-8x7b"], "mixture of experts"),
        (["--model", "megatron-1.2b", "--layers-run", "41"], "layers run"),
        (["--layers", "2", "--hidden", "64", "--heads", "5"], "heads must divide"),
        (["--model", "megatron-1.2b", "--steps", "0"], "--steps"),
        (["--model", "megatron-1.2b", "--warmup", "x"], "--warmup"),
        (["--model", "megatron-1.2b", "--micro-batch", "0"], "--micro-batch"),
        (["--model", "megatron-1.2b", "-g", "x"], "--gpus"),
        (["--model", "megatron-1.2b", "-b", "rocm"], "-b: expected cuda, opencl or auto"),
        (["--model", "megatron-1.2b", "--json", "/nonexistent/dir/x.json"], "--json"),
        (["--layers", "2"], "name a model"),
        (["--model", "megatron-1.2b", "--bogus"], "bogus"),
    ]
    for args, want in bad:
        p, _ = run(args, json_out=False)
        check(p.returncode == 2 and want in p.stderr and "bench train" in p.stderr,
              "%s exits 2 naming %s: %d %s" % (args, want, p.returncode, p.stderr.strip()[-200:]))
    p, _ = run(["--help"], json_out=False)
    check(p.returncode == 0 and "--layers-run" in p.stdout and "gpuvet.bench-train/1" in p.stdout, "--help")
    p = subprocess.run([GPUVET, "bench", "-b", "cuda", "train"], capture_output=True, text=True, timeout=30)
    check(p.returncode == 2 and "put it first" in p.stderr, "options before train: %s" % p.stderr.strip())
    p = subprocess.run([GPUVET, "bench", "--list"], capture_output=True, text=True, timeout=30)
    check(p.returncode == 0 and any(l.startswith("train ") for l in p.stdout.splitlines()), "--list shows train")


STAND_IN = r'''
import json, sys
args = dict(zip(sys.argv[1::2], sys.argv[2::2]))
mode = "%s"
if mode == "garbage":
    print("not json"); sys.exit(1)
if mode == "error":
    print(json.dumps({"schema": "gpuvet.train-torch/1", "status": "error", "why": "CUDA out of memory"})); sys.exit(1)
json.dump({"args": args}, open(sys.argv[0] + ".args", "w"))
print(json.dumps({"schema": "gpuvet.train-torch/1", "status": "ok", "torch": "9.9.9", "device": "Stand-in GPU",
                  "forward_ms": [1.0, 1.0, 3.0], "logits_ms": [0.5, 0.5], "backward_ms": [2.0, 2.0, 2.0]}))
'''


def torch():
    # --- no torch here: the real script skips, the run passes
    p, rep = run(TINY + ["-b", "cuda", "-n", "2", "-w", "1", "--framework", "torch", "--data-dir", DATA])
    t = (rep or {}).get("torch") or {}
    have_torch = subprocess.run([sys.executable, "-c", "import torch"], capture_output=True).returncode == 0
    if not have_torch:
        check(p.returncode == 0 and t.get("status") == "skip" and "torch" in t.get("why", ""),
              "no torch: a clean skip: %d %s" % (p.returncode, t))
        check("PyTorch skipped" in p.stdout, "the text says PyTorch skipped:\n" + p.stdout)
    # --- no python3 at all
    p, rep = run(TINY + ["-b", "cuda", "-n", "2", "-w", "1", "--framework", "torch", "--data-dir", DATA],
                 env={"PATH": "/nonexistent"})
    t = (rep or {}).get("torch") or {}
    check(p.returncode == 0 and t.get("status") == "skip" and "python3" in t.get("why", ""),
          "no python3: %s" % t)
    # --- the JSON contract, through a stand-in (test build only)
    with tempfile.TemporaryDirectory() as d:
        for mode in ("ok", "garbage", "error"):
            script = os.path.join(d, mode + ".py")
            open(script, "w").write(STAND_IN % mode)
            p, rep = run(TINY + ["-b", "cuda", "-n", "3", "-w", "1", "--framework", "torch", "-p", "fp16"],
                         env={"GPUVET_TEST_TORCH_SCRIPT": script}, binary=HOOKS)
            t = (rep or {}).get("torch") or {}
            if mode == "ok":
                whole = (1.0 + 2.0) * 2 / 2 + 0.5  # medians: (forward + backward) x layers / layers_run + logits
                check(p.returncode == 0 and t.get("status") == "pass" and t.get("torch_version") == "9.9.9" and
                      near(t.get("tflops"), TINY_MODEL / whole / 1e9) and near(t.get("tokens_per_s"), 64 / (whole / 1e3)),
                      "stand-in torch figures: %s" % t)
                args = json.load(open(script + ".args"))["args"]
                check(args.get("--precision") == "fp16" and args.get("--hidden") == "64" and
                      args.get("--layers-run") == "2" and args.get("--mlp") == "plain" and args.get("--steps") == "3",
                      "the script gets the step's shape: %s" % args)
            else:
                check(p.returncode == 1 and t.get("status") == "error", "%s script is an error: %s" % (mode, t))
        check("CUDA out of memory" in t.get("why", ""), "the script's reason is shown: %s" % t.get("why"))
    # the released gpuvet ignores the stand-in
    p, rep = run(TINY + ["-b", "cuda", "-n", "2", "-w", "1", "--framework", "torch"],
                 env={"GPUVET_TEST_TORCH_SCRIPT": "/nonexistent.py"})
    check("nonexistent.py" not in json.dumps((rep or {}).get("torch")), "the released gpuvet has no test script")


def main():
    with tempfile.TemporaryDirectory() as root:
        fixture_tree.build(root)
        fakes(root)
        baseline(root)
        faults(root)
    opencl()
    usage()
    torch()
    if failures:
        print("%d failure(s)" % len(failures))
        sys.exit(1)
    print("ok")


if __name__ == "__main__":
    main()
