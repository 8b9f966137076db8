/* bench train: a training-step proxy (docs/bench.md, "train"). The GEMMs of a transformer
 * layer's forward and backward (bench/train_shape.h) for --layers-run layers, then the
 * logit layer's, run back to back on each device per step and timed with device events:
 * cuBLASLt on CUDA (the heuristic's first algorithm for each product, as PyTorch and
 * Megatron-LM take it), the gemm_mnk_f32 kernel on OpenCL (fp32).
 *
 * Measurements (bench "train", subject the device):
 *   step      TFLOPS  model FLOPs of the whole model (train_model_flops) over the step time
 *                     it implies: the measured layers' time x layers / layers_run, plus the
 *                     logit layer's (and the whole model's all-reduce on more than one
 *                     GPU); with the GPU's spec peak for the precision, so the
 *                     judged ratio to the peak is the MFU
 *   forward, backward, logits   ms of each part of the proxy's step, as run
 *   allreduce ms      data parallel only: the gradients' all-reduce through NCCL
 * One product of each layout (the first head's attention scores "TN", context "NN" and dV
 * "NT"; OpenCL: the scores) is then run again on known inputs and checked against the
 * host's exact reference: a wrong kernel fails the step measurement whatever its figure.
 * With more than one GPU the gradients' all-reduce follows the backward (measurement
 * allreduce, ms), and one all-reduce of known values is checked on every rank.
 *
 * In bench.def as a BENCH_COMMAND, not part of all: `gpuvet bench train` runs it alone
 * (src/cmd/bench_train.c), with the shape in bench_options.train_shape. */
#pragma once

#include "bench/bench.h"

extern const struct bench_info bench_train;

/* The precision bench train runs when none is asked for: bf16 on CUDA, fp32 on OpenCL (the
 * one its kernel has). */
const char *bench_train_default_precision(enum dev_kind kind);
