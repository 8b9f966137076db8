#!/usr/bin/env python3
"""gpuvet bench train --framework torch: the step's GEMMs in PyTorch.

The same products as gpuvet's native proxy (src/bench/train_shape.c): per layer the
forward's QKV projection, attention scores and context per head (as one batched matmul
over micro-batch x heads), output projection and MLP; the backward's data and weight
gradients of each (2x the forward); the logit layer once a step. torch.matmul in the
chosen dtype on one CUDA device, timed with torch.cuda.Event per part. Prints one JSON
object (schema gpuvet.train-torch/1) and exits 0; 77 with status "skip" when torch, a
CUDA device or the precision is not there; 1 on an error.
"""
import argparse
import json
import sys

SCHEMA = "gpuvet.train-torch/1"
SKIP = 77


def emit(obj, code):
    obj["schema"] = SCHEMA
    print(json.dumps(obj))
    sys.exit(code)


def parse():
    p = argparse.ArgumentParser()
    for name in ("layers", "hidden", "heads", "kv-heads", "ffn", "vocab", "seq", "micro-batch", "layers-run",
                 "steps", "warmup", "device"):
        p.add_argument("--" + name, type=int, required=True)
    p.add_argument("--mlp", choices=("gated", "plain"), required=True)
    p.add_argument("--precision", choices=("bf16", "fp16", "fp32", "tf32", "fp8"), required=True)
    return p.parse_args()


def main():
    a = parse()
    try:
        import torch
    except ImportError as e:
        emit({"status": "skip", "why": "python3 has no torch (%s)" % e}, SKIP)
    if not torch.cuda.is_available() or a.device >= torch.cuda.device_count():
        emit({"status": "skip", "why": "torch %s sees no CUDA device %d" % (torch.__version__, a.device)}, SKIP)
    if a.precision == "fp8":
        emit({"status": "skip", "why": "torch.matmul has no fp8 (torch._scaled_mm is not compared)"}, SKIP)
    dtype = {"bf16": torch.bfloat16, "fp16": torch.float16, "fp32": torch.float32, "tf32": torch.float32}[a.precision]
    torch.backends.cuda.matmul.allow_tf32 = a.precision == "tf32"
    dev = torch.device("cuda", a.device)
    torch.cuda.set_device(dev)

    h, T, s, d = a.hidden, a.micro_batch * a.seq, a.seq, a.hidden // a.heads
    bh = a.micro_batch * a.heads
    qkv = h + 2 * a.kv_heads * d
    up = (2 if a.mlp == "gated" else 1) * a.ffn

    def t(*shape):
        return (torch.randint(-4, 5, shape, device=dev).to(dtype) / 2)

    # row-major as PyTorch holds them: weights [out, in], activations [tokens, features]
    linears = [(h, qkv), (h, h), (h, up), (a.ffn, h)]
    weights = [[t(o, i) for (i, o) in linears] for _ in range(a.layers_run)]
    xs = {i: t(T, i) for (i, o) in linears}
    dys = {o: t(T, o) for (i, o) in linears}
    q, k, v = t(bh, s, d), t(bh, s, d), t(bh, s, d)
    p_, do = t(bh, s, s), t(bh, s, d)
    w_logit, x_logit, dy_logit = t(a.vocab, h), t(T, h), t(T, a.vocab)

    def forward():
        for w in weights:
            torch.matmul(xs[h], w[0].t())                  # qkv
            torch.matmul(q, k.transpose(1, 2))             # scores, per head
            torch.matmul(p_, v)                            # context
            torch.matmul(xs[h], w[1].t())                  # proj
            torch.matmul(xs[h], w[2].t())                  # mlp up (gate and up)
            torch.matmul(xs[a.ffn], w[3].t())              # mlp down

    def logits():
        torch.matmul(x_logit, w_logit.t())
        torch.matmul(dy_logit, w_logit)                    # data gradient
        torch.matmul(dy_logit.t(), x_logit)                # weight gradient

    def backward():
        for w in reversed(weights):
            for j in (3, 2, 1):
                i, o = linears[j]
                torch.matmul(dys[o], w[j])                 # data gradient
                torch.matmul(dys[o].t(), xs[i])            # weight gradient
            torch.matmul(do, v.transpose(1, 2))            # dP = dO V^T
            torch.matmul(p_.transpose(1, 2), do)           # dV = P^T dO
            torch.matmul(p_, k)                            # dQ = dS K
            torch.matmul(p_.transpose(1, 2), q)            # dK = dS^T Q
            torch.matmul(dys[qkv], w[0])
            torch.matmul(dys[qkv].t(), xs[h])

    parts = (forward, logits, backward)
    times = {"forward_ms": [], "logits_ms": [], "backward_ms": []}
    ev = [torch.cuda.Event(enable_timing=True) for _ in range(len(parts) + 1)]
    for step in range(a.warmup + a.steps):
        ev[0].record()
        for i, part in enumerate(parts):
            part()
            ev[i + 1].record()
        torch.cuda.synchronize()
        if step >= a.warmup:
            for i, key in enumerate(("forward_ms", "logits_ms", "backward_ms")):
                times[key].append(ev[i].elapsed_time(ev[i + 1]))
    out = {"status": "ok", "torch": torch.__version__, "device": torch.cuda.get_device_name(dev)}
    out.update(times)
    emit(out, 0)


if __name__ == "__main__":
    try:
        main()
    except SystemExit:
        raise
    except Exception as e:  # an error is a JSON answer too, so gpuvet can say what happened
        emit({"status": "error", "why": "%s: %s" % (type(e).__name__, e)}, 1)
