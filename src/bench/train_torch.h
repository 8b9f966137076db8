/* bench train --framework torch: the same step's GEMMs in PyTorch (data/train_torch.py, run
 * with python3 under the deadline), for comparison with gpuvet's native step.
 *
 * The script prints one JSON object on standard output (schema gpuvet.train-torch/1):
 *   {"schema": "gpuvet.train-torch/1", "status": "ok", "torch": "2.5.1", "device": "...",
 *    "forward_ms": [...], "logits_ms": [...], "backward_ms": [...]}   one entry a step
 *   {"schema": "gpuvet.train-torch/1", "status": "skip", "why": "no module named torch"}
 * and exits 0 (ok), 77 (skip) or anything else (error). */
#pragma once

#include <stddef.h>

#include "bench/train_shape.h"
#include "core/result.h"

/* --framework torch: the same step in PyTorch (data/train_torch.py), beside the native one. */
struct train_torch_result {
        enum status status;     /* pass: it ran; skip: no python3, torch or CUDA device; error */
        char why[256];          /* skip or error: what was missing or went wrong */
        char version[32];       /* torch.__version__ */
        char device[128];       /* torch.cuda.get_device_name */
        double forward_ms, backward_ms, logits_ms; /* medians of the parts, as the native step */
        double tflops, tokens_per_s, samples_per_s;
};

/* The script: DIR/train_torch.py for --data-dir DIR when it is there, else the installed
 * one (DATADIR/train_torch.py); in the test build, $GPUVET_TEST_TORCH_SCRIPT first. Written
 * into buf. */
void train_torch_script(const char *data_dir, char *buf, size_t size);

/* Run the script for shape s at precision for warmup + steps steps on CUDA device
 * gpu_index, within timeout_s; fill *ret (status pass, skip or error with why). The
 * figures are derived as the native step's: model FLOPs over the whole model's step. */
void train_torch_run(const char *script, const struct train_shape *s, const char *precision, unsigned steps,
                     unsigned warmup, int gpu_index, unsigned timeout_s, struct train_torch_result *ret);
