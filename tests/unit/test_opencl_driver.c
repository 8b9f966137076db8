/* Test driver for the OpenCL backend and the device benchmarks (memory, compute, transfer):
 * opens the OpenCL backend (this copy of src/bindings/opencl_device.c is compiled with
 * GPUVET_TEST_HOOKS, so GPUVET_TEST_WRONG_KERNEL and GPUVET_TEST_CL_TUNING work), runs one
 * benchmark's bench_info.run with a hand-made bench_ctx (no facts: no peaks) and prints
 * every measurement as one JSON array on stdout. tests/golden/test_bench_opencl.py runs it.
 *
 *   test_opencl_driver BENCH [--size BYTES] [--reps N] [--warmup N] [--precision P] [--gpus I] [--only TEST]
 *
 * Exit: 0 after printing (the test judges the measurements), 77 when there is no OpenCL
 * platform or device (the caller skips), 2 on bad usage. */
#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/bench.h"

static const struct bench_info *find(const char *name) {
        const struct bench_info *all[] = {&bench_memory, &bench_compute, &bench_transfer};
        for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++)
                if (!strcmp(all[i]->name, name))
                        return all[i];
        return NULL;
}

int main(int argc, char **argv) {
        if (argc < 2) {
                fprintf(stderr, "usage: %s memory|compute|transfer [--size B] [--reps N] [--warmup N] [--precision P] [--gpus I] [--only TEST]\n", argv[0]);
                return 2;
        }
        const struct bench_info *bi = find(argv[1]);
        if (!bi) {
                fprintf(stderr, "unknown benchmark %s\n", argv[1]);
                return 2;
        }
        struct bench_options opt = {.backend = "opencl"};
        int gpu = -1;
        for (int i = 2; i + 1 < argc; i += 2) {
                const char *k = argv[i], *v = argv[i + 1];
                if (!strcmp(k, "--size"))
                        opt.size_bytes = strtoull(v, NULL, 0);
                else if (!strcmp(k, "--reps"))
                        opt.reps = (unsigned)strtoul(v, NULL, 0);
                else if (!strcmp(k, "--warmup"))
                        opt.warmup = (unsigned)strtoul(v, NULL, 0);
                else if (!strcmp(k, "--precision"))
                        opt.precision = v;
                else if (!strcmp(k, "--gpus"))
                        gpu = atoi(v);
                else if (!strcmp(k, "--only"))
                        opt.only = v;
                else {
                        fprintf(stderr, "unknown option %s\n", k);
                        return 2;
                }
        }
        if (gpu >= 0) {
                opt.gpus = &gpu;
                opt.n_gpus = 1;
        }
        char err[512];
        struct dev_backend *dev = NULL;
        int r = dev_ops_opencl.open(&dev, err, sizeof(err));
        if (r < 0) {
                fprintf(stderr, "no OpenCL: %s\n", err);
                return 77;
        }
        struct bench_ctx ctx = {.opt = &opt, .ops = &dev_ops_opencl, .dev = dev};
        struct bench_report rep;
        bench_report_init(&rep);
        bi->run(&ctx, &rep);
        struct bench_limits limits = {.pass_ratio = 0.8, .warn_ratio = 0.5};
        json_t *arr = json_array();
        for (size_t i = 0; i < rep.n; i++) {
                struct measurement *m = &rep.m[i];
                bench_judge(m, &limits);
                json_t *params = json_object(), *samples = json_array();
                for (size_t p = 0; p < m->n_params; p++)
                        json_object_set_new(params, m->params[p].key, json_string(m->params[p].value));
                for (size_t s = 0; s < m->n_samples; s++)
                        json_array_append_new(samples, json_real(m->samples[s]));
                json_array_append_new(arr, json_pack("{s:s, s:s, s:s, s:s, s:s, s:f, s:f, s:f, s:f, s:b, s:s, s:s, s:o, s:o}",
                        "bench", m->bench, "name", m->name, "subject", m->subject, "unit", m->unit,
                        "status", status_name(m->status), "median", m->stats.median, "min", m->stats.min,
                        "max", m->stats.max, "cv", m->stats.cv, "verified", m->verified,
                        "verify_error", m->verify_error, "summary", m->summary, "params", params, "samples", samples));
        }
        char *out = json_dumps(arr, JSON_INDENT(1));
        puts(out ? out : "[]");
        free(out);
        json_decref(arr);
        bench_report_done(&rep);
        dev_ops_opencl.close(dev);
        return 0;
}
