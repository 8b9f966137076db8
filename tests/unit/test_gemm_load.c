/* Test and measurement driver for the burn's GEMM load (src/burn/gemm_load.c): opens the
 * backend, then on each selected device a load, runs ROUNDS rounds of (enqueue PRODUCTS
 * products, wait, verify) and prints one JSON object per device on stdout. Built with its
 * own copy of src/bindings/opencl_device.c compiled with GPUVET_TEST_HOOKS, so
 * GPUVET_TEST_CORRUPT_GEMM works on PoCL; the CUDA backend loads $GPUVET_CUDA_LIB (the fake
 * libcuda) and cuBLASLt $GPUVET_CUBLASLT_LIB (the fake cuBLASLt).
 * tests/golden/test_burn_gemm.py runs it; perf/ figures come from it too (--bench: also
 * bench compute's fp32 and fp64 FMA rates on the same device, through the same kernels).
 *
 *   test_gemm_load cuda|opencl [--precision P] [--n N] [--devices all|I[,J...]]
 *                  [--products K] [--rounds R] [--seed S] [--bench]
 *
 * Per device: {"device", "rc", "error", "describe", "fingerprint", "n", "flops",
 * "open_ms", "rounds": [{"device_ms", "wall_ms", "verify_ms", "sampled", "faulty_vs_host",
 * "compared", "faulty_vs_first", "digest", "fault": {"row", "col", "expected", "got"}}]}.
 * Exit: 0 after printing, 77 when the backend has no device, 2 on bad usage. */
#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench/bench.h"
#include "burn/gemm_load.h"

static double now_ms(void) {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static char *hex(uint64_t v, char *buf) {
        snprintf(buf, 17, "%016llx", (unsigned long long)v);
        return buf;
}

static json_t *run_device(const struct dev_ops *ops, struct dev_backend *b, int index,
                          const struct gemm_load_options *o, unsigned products, unsigned rounds) {
        json_t *res = json_pack("{s:i}", "device", index);
        struct dev_info info;
        struct dev_ctx *ctx = NULL;
        int e = ops->info(b, index, &info);
        if (e == 0)
                e = ops->ctx_open(b, index, &ctx);
        if (e < 0) {
                json_object_set_new(res, "rc", json_integer(e));
                json_object_set_new(res, "error", json_string(ops->last_error(b)));
                return res;
        }
        char err[1024], buf[17];
        struct gemm_load *g = NULL;
        double t0 = now_ms();
        e = gemm_load_open(ops, b, ctx, &info, o, &g, err, sizeof(err));
        json_object_set_new(res, "open_ms", json_real(now_ms() - t0));
        json_object_set_new(res, "rc", json_integer(e));
        if (e < 0) {
                json_object_set_new(res, "error", json_string(err));
                ops->ctx_close(ctx);
                return res;
        }
        json_object_set_new(res, "describe", json_string(gemm_load_describe(g)));
        json_object_set_new(res, "fingerprint", json_string(hex(gemm_load_fingerprint(g), buf)));
        json_object_set_new(res, "n", json_integer(gemm_load_n(g)));
        json_object_set_new(res, "flops", json_real(gemm_load_flops(g)));
        json_t *arr = json_array();
        for (unsigned r = 0; r < rounds; r++) {
                double ms = 0, w0 = now_ms();
                if ((e = gemm_load_enqueue(g, products)) < 0 || (e = gemm_load_wait(g, &ms)) < 0)
                        break;
                double w1 = now_ms();
                struct gemm_check c;
                if ((e = gemm_load_verify(g, &c)) < 0)
                        break;
                double w2 = now_ms();
                json_t *round = json_pack("{s:f, s:f, s:f, s:I, s:I, s:I, s:I, s:s}", "device_ms", ms, "wall_ms",
                                          w1 - w0, "verify_ms", w2 - w1, "sampled", (json_int_t)c.elements_sampled,
                                          "faulty_vs_host", (json_int_t)c.faulty_vs_host, "compared",
                                          (json_int_t)c.elements_compared, "faulty_vs_first",
                                          (json_int_t)c.faulty_vs_first, "digest", hex(c.digest, buf));
                if (c.faulty_vs_host || c.faulty_vs_first)
                        json_object_set_new(round, "fault", json_pack("{s:i, s:i, s:f, s:f}", "row", (int)c.fault.row,
                                                                      "col", (int)c.fault.col, "expected",
                                                                      c.fault.expected, "got", c.fault.got));
                json_array_append_new(arr, round);
        }
        json_object_set_new(res, "rounds", arr);
        if (e < 0) {
                json_object_set_new(res, "rc", json_integer(e));
                json_object_set_new(res, "error", json_string(gemm_load_error(g)));
        }
        gemm_load_close(g);
        ops->ctx_close(ctx);
        return res;
}

/* bench compute's fp32 / fp64 FMA figures on one device, for the comparison. */
static json_t *bench_compute_on(const struct dev_ops *ops, struct dev_backend *b, int index) {
        int gpu = index;
        struct bench_options opt = {.backend = ops->name, .gpus = &gpu, .n_gpus = 1};
        struct bench_ctx bctx = {.opt = &opt, .ops = ops, .dev = b};
        struct bench_report rep;
        bench_report_init(&rep);
        bench_compute.run(&bctx, &rep);
        json_t *res = json_object();
        for (size_t i = 0; i < rep.n; i++) {
                struct measurement *m = &rep.m[i];
                bench_judge(m, &(struct bench_limits){.pass_ratio = 0.8, .warn_ratio = 0.5});
                json_object_set_new(res, m->name, json_pack("{s:f, s:s, s:b}", "median", m->stats.median, "unit",
                                                            m->unit, "verified", m->verified));
        }
        bench_report_done(&rep);
        return res;
}

int main(int argc, char **argv) {
        if (argc < 2) {
                fprintf(stderr, "usage: %s cuda|opencl [--precision P] [--n N] [--devices all|I,J] [--products K] "
                                "[--rounds R] [--seed S] [--bench]\n", argv[0]);
                return 2;
        }
        const struct dev_ops *ops = dev_ops_by_name(argv[1]);
        if (!ops) {
                fprintf(stderr, "unknown backend %s\n", argv[1]);
                return 2;
        }
        struct gemm_load_options o = {.precision = BURN_FP32};
        const char *devices = "all";
        unsigned products = 1, rounds = 3;
        bool with_bench = false;
        for (int i = 2; i < argc; i++) {
                const char *k = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
                if (!strcmp(k, "--bench")) {
                        with_bench = true;
                        continue;
                }
                if (!v) {
                        fprintf(stderr, "%s needs a value\n", k);
                        return 2;
                }
                i++;
                if (!strcmp(k, "--precision")) {
                        o.precision = burn_precision_parse(v);
                        if (o.precision == _BURN_PRECISION_INVALID) {
                                fprintf(stderr, "unknown precision %s\n", v);
                                return 2;
                        }
                } else if (!strcmp(k, "--n")) {
                        o.n = (unsigned)strtoul(v, NULL, 0);
                } else if (!strcmp(k, "--devices")) {
                        devices = v;
                } else if (!strcmp(k, "--products")) {
                        products = (unsigned)strtoul(v, NULL, 0);
                } else if (!strcmp(k, "--rounds")) {
                        rounds = (unsigned)strtoul(v, NULL, 0);
                } else if (!strcmp(k, "--seed")) {
                        o.seed = strtoull(v, NULL, 0);
                } else {
                        fprintf(stderr, "unknown option %s\n", k);
                        return 2;
                }
        }
        char err[512];
        struct dev_backend *b = NULL;
        if (ops->open(&b, err, sizeof(err)) < 0) {
                fprintf(stderr, "no %s device: %s\n", ops->name, err);
                return 77;
        }
        int count = ops->count(b);
        json_t *arr = json_array();
        for (int d = 0; d < count; d++) {
                if (strcmp(devices, "all")) {
                        bool want = false;
                        for (const char *p = devices; p && *p; p = strchr(p, ',') ? strchr(p, ',') + 1 : NULL)
                                want |= atoi(p) == d;
                        if (!want)
                                continue;
                }
                json_t *res = run_device(ops, b, d, &o, products, rounds);
                if (with_bench)
                        json_object_set_new(res, "bench_compute", bench_compute_on(ops, b, d));
                json_array_append_new(arr, res);
        }
        char *out = json_dumps(arr, JSON_INDENT(1));
        puts(out ? out : "[]");
        free(out);
        json_decref(arr);
        ops->close(b);
        return 0;
}
