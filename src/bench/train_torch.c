#include "bench/train_torch.h"

#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "results/stats.h"
#include "core/run_command.h"
#include "version.h"

#define TORCH_MAX_OUTPUT (1u << 20)
#define TORCH_SKIP_EXIT 77 /* the script's "not here": no torch, no CUDA device */

void train_torch_script(const char *data_dir, char *buf, size_t size) {
#ifdef GPUVET_TEST_HOOKS
        /* test-only: a script that plays PyTorch's part (tests/golden/test_bench_train.py) */
        const char *test = getenv("GPUVET_TEST_TORCH_SCRIPT");
        if (test && *test) {
                snprintf(buf, size, "%s", test);
                return;
        }
#endif
        if (data_dir) {
                snprintf(buf, size, "%s/train_torch.py", data_dir);
                if (access(buf, R_OK) == 0)
                        return;
        }
        snprintf(buf, size, "%s/train_torch.py", GPUVET_INSTALLED_DATADIR);
}

/* The median of a JSON array of numbers; 0 when it is not one or holds none. */
static double median_of(json_t *a) {
        size_t n = json_array_size(a);
        double *v = n ? calloc(n, sizeof(double)) : NULL;
        if (!v)
                return 0;
        for (size_t i = 0; i < n; i++)
                v[i] = json_number_value(json_array_get(a, i)); /* 0 for a non-number: the median then says so */
        struct bench_stats st;
        double m = bench_stats_compute(v, n, &st) == 0 ? st.median : 0;
        free(v);
        return m;
}

static void parse_output(const struct command_result *cr, const struct train_shape *s,
                         struct train_torch_result *ret) {
        json_error_t jerr;
        json_t *o = json_loads(cr->out ? cr->out : "", 0, &jerr);
        const char *schema = json_string_value(json_object_get(o, "schema"));
        const char *status = json_string_value(json_object_get(o, "status"));
        if (!json_is_object(o) || !schema || strcmp(schema, "gpuvet.train-torch/1") != 0 || !status) {
                ret->status = STATUS_ERROR;
                snprintf(ret->why, sizeof(ret->why), "the PyTorch script's output is not a gpuvet.train-torch/1 object "
                                                     "(exit %d)%s%.160s", cr->exit_status, cr->err_tail[0] ? ": " : "",
                         cr->err_tail);
                json_decref(o);
                return;
        }
        const char *why = json_string_value(json_object_get(o, "why"));
        if (strcmp(status, "ok") != 0 || cr->exit_status != 0) {
                bool skip = !strcmp(status, "skip") && cr->exit_status == TORCH_SKIP_EXIT;
                ret->status = skip ? STATUS_SKIP : STATUS_ERROR;
                snprintf(ret->why, sizeof(ret->why), "PyTorch %s: %s", skip ? "skipped" : "failed",
                         why ? why : "no reason given");
                json_decref(o);
                return;
        }
        snprintf(ret->version, sizeof(ret->version), "%s", json_string_value(json_object_get(o, "torch")) ?: "?");
        snprintf(ret->device, sizeof(ret->device), "%s", json_string_value(json_object_get(o, "device")) ?: "?");
        ret->forward_ms = median_of(json_object_get(o, "forward_ms"));
        ret->logits_ms = median_of(json_object_get(o, "logits_ms"));
        ret->backward_ms = median_of(json_object_get(o, "backward_ms"));
        json_decref(o);
        double whole = train_whole_step_ms(s, ret->forward_ms, ret->backward_ms, ret->logits_ms);
        if (!(ret->forward_ms > 0 && ret->backward_ms > 0 && ret->logits_ms > 0)) {
                ret->status = STATUS_ERROR;
                snprintf(ret->why, sizeof(ret->why), "the PyTorch script gave no step times");
                return;
        }
        ret->status = STATUS_PASS;
        ret->tflops = train_model_flops(s) / whole / 1e9;
        ret->tokens_per_s = (double)s->micro_batch * s->seq / (whole / 1e3);
        ret->samples_per_s = (double)s->micro_batch / (whole / 1e3);
}

void train_torch_run(const char *script, const struct train_shape *s, const char *precision, unsigned steps,
                     unsigned warmup, int gpu_index, unsigned timeout_s, struct train_torch_result *ret) {
        memset(ret, 0, sizeof(*ret));
        char a[12][24];
        unsigned v[12] = {s->layers, s->hidden, s->heads, s->kv_heads, s->ffn, s->vocab,
                          s->seq, s->micro_batch, s->layers_run, steps, warmup, (unsigned)gpu_index};
        for (int i = 0; i < 12; i++)
                snprintf(a[i], sizeof(a[i]), "%u", v[i]);
        char *argv[] = {"python3", (char *)script, "--layers", a[0], "--hidden", a[1], "--heads", a[2],
                        "--kv-heads", a[3], "--ffn", a[4], "--vocab", a[5], "--mlp", (char *)est_mlp_name(s->mlp),
                        "--seq", a[6], "--micro-batch", a[7], "--layers-run", a[8], "--steps", a[9], "--warmup", a[10],
                        "--device", a[11], "--precision", (char *)precision, NULL};
        if (access(script, R_OK) != 0) {
                ret->status = STATUS_SKIP;
                snprintf(ret->why, sizeof(ret->why), "PyTorch skipped: no script %s (%s)", script, strerror(errno));
                return;
        }
        struct command_result cr;
        int e = run_command(argv, timeout_s * 1000u, TORCH_MAX_OUTPUT, &cr);
        if (e == -ENOENT) {
                ret->status = STATUS_SKIP;
                snprintf(ret->why, sizeof(ret->why), "PyTorch skipped: no python3 in PATH");
                return;
        }
        if (e < 0) {
                ret->status = STATUS_ERROR;
                snprintf(ret->why, sizeof(ret->why), "running python3 %s: %s", script, strerror(-e));
                return;
        }
        if (cr.timed_out) {
                ret->status = STATUS_ERROR;
                snprintf(ret->why, sizeof(ret->why), "the PyTorch script timed out after %u s", timeout_s);
        } else {
                parse_output(&cr, s, ret);
        }
        command_result_done(&cr);
}
