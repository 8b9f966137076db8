#include "report/bench_train_report.h"

#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "report/bench_json.h"
#include "report/envelope.h"
#include "core/json_real.h"
#include "core/json_text.h"

#define TRAIN_SCHEMA "gpuvet.bench-train/1"

static double median(const struct measurement *m) { return m && m->stats.n ? m->stats.median : 0; }

static void counts_of(const struct train_report *r, unsigned counts[_STATUS_COUNT]) {
        for (int s = 0; s < _STATUS_COUNT; s++)
                counts[s] = 0;
        for (size_t i = 0; i < r->n_m; i++)
                counts[r->m[i].status]++;
        if (r->torch)
                counts[r->torch->status]++;
}

static void text_shape(FILE *out, const struct train_report *r) {
        const struct train_shape *s = r->shape;
        fprintf(out, "Model      %s (%s): %u layers, hidden %u, %u heads (%u KV), FFN %u %s, vocabulary %u\n",
                r->model_id, r->model_name, s->layers, s->hidden, s->heads, s->kv_heads, s->ffn, est_mlp_name(s->mlp),
                s->vocab);
        fprintf(out, "Step       micro-batch %u x sequence %u = %u tokens; %u of %u layers run, then the logits; %s\n",
                s->micro_batch, s->seq, s->micro_batch * s->seq, s->layers_run, s->layers, r->precision);
        fprintf(out, "FLOPs      %.4g a layer, %.4g the logits: proxy step %.4g, whole model %.4g (Megatron-LM eq. 3)\n",
                r->layer_flops, r->logit_flops, r->proxy_flops, r->model_flops);
        fprintf(out, "Run        %s backend, %u device%s, %u steps after %u warm-up\n", r->backend[0] ? r->backend : "no",
                r->gpus, r->gpus == 1 ? "" : "s", r->steps, r->warmup);
}

static void text_figures(FILE *out, const struct train_figures *f, const struct text_options *opt) {
        char glyph[32];
        const struct measurement *m = f->step;
        fprintf(out, "\n%s %s  %s\n", report_text_glyph(m->status, opt, glyph, sizeof(glyph)), m->subject,
                m->n_params ? m->params[0].value : "");
        if (f->cpu_device)
                fprintf(out, "  (a CPU device: these figures are measured, not a GPU's, and are not judged)\n");
        if (!m->stats.n) {
                fprintf(out, "  %s\n", m->summary);
                return;
        }
        fprintf(out, "  proxy step   forward %.4g ms + logits %.4g ms + backward %.4g ms", median(f->forward),
                median(f->logits), median(f->backward));
        if (f->allreduce)
                fprintf(out, " + all-reduce %.4g ms (%s B, after the backward, not overlapped)", median(f->allreduce),
                        f->allreduce->n_params ? f->allreduce->params[0].value : "?");
        fprintf(out, " (medians)\n");
        fprintf(out, "  whole model  %.4g ms a step: %.4g tokens/s, %.4g samples/s\n", f->whole_step_ms, f->tokens_per_s,
                f->samples_per_s);
        fprintf(out, "  achieved     %.2f TFLOPS (median of %zu steps, cv %.1f%%)", m->stats.median, m->stats.n,
                m->stats.cv * 100);
        if (f->mfu > 0)
                fprintf(out, ", MFU %.1f%% of %.0f TFLOPS (%s)", f->mfu * 100, m->peak, m->peak_source);
        fprintf(out, "\n");
        if (m->baseline > 0)
                fprintf(out, "  baseline     %.1f TFLOPS (%s): %.0f%%\n", m->baseline, m->baseline_source,
                        m->ratio_baseline * 100);
        fprintf(out, "  verified     %s\n", m->verified ? "yes (the first head's attention products against the exact host reference)"
                                          : m->verify_error[0] ? m->verify_error : "no");
        if (f->allreduce)
                fprintf(out, "  all-reduce   %s\n", f->allreduce->verified ? "verified (a known sum on every rank)"
                                                   : f->allreduce->verify_error[0] ? f->allreduce->verify_error : "not verified");
        fprintf(out, "  %s\n", m->summary);
}

static void text_torch(FILE *out, const struct train_torch_result *t, const struct train_figures *native,
                       const struct text_options *opt) {
        char glyph[32];
        fprintf(out, "\n%s PyTorch  ", report_text_glyph(t->status, opt, glyph, sizeof(glyph)));
        if (t->status != STATUS_PASS) {
                fprintf(out, "%s\n", t->why);
                return;
        }
        fprintf(out, "torch %s on %s\n", t->version, t->device);
        fprintf(out, "  proxy step   forward %.4g ms + logits %.4g ms + backward %.4g ms (medians)\n", t->forward_ms,
                t->logits_ms, t->backward_ms);
        fprintf(out, "  achieved     %.2f TFLOPS, %.1f tokens/s", t->tflops, t->tokens_per_s);
        if (native && native->step->stats.n && t->tflops > 0)
                fprintf(out, " (native %.2f TFLOPS: torch at %.0f%% of it)", native->step->stats.median,
                        t->tflops / native->step->stats.median * 100);
        fprintf(out, "\n");
}

void train_report_text(FILE *out, const struct train_report *r, const struct text_options *opt) {
        fprintf(out, "gpuvet bench train: a training-step proxy (GEMMs only; docs/bench.md)\n\n");
        text_shape(out, r);
        for (size_t i = 0; i < r->n_fig; i++)
                text_figures(out, &r->fig[i], opt);
        /* measurements that are not a device's figures: setup failures, skips */
        for (size_t i = 0; i < r->n_m; i++) {
                bool shown = false;
                for (size_t f = 0; f < r->n_fig; f++)
                        shown |= r->fig[f].step == &r->m[i] || r->fig[f].forward == &r->m[i] ||
                                 r->fig[f].backward == &r->m[i] || r->fig[f].logits == &r->m[i] ||
                                 r->fig[f].allreduce == &r->m[i];
                if (!shown) {
                        char glyph[32];
                        fprintf(out, "\n%s %s %s: %s\n", report_text_glyph(r->m[i].status, opt, glyph, sizeof(glyph)),
                                r->m[i].subject, r->m[i].name, r->m[i].summary);
                }
        }
        if (r->node_tokens_per_s > 0)
                fprintf(out, "\nNode       %u GPUs data parallel: %.4g tokens/s (each GPU's micro-batch over the slowest "
                             "whole-model step)\n", r->gpus, r->node_tokens_per_s);
        if (r->torch)
                text_torch(out, r->torch, r->n_fig ? &r->fig[0] : NULL, opt);
        if (r->baseline_note && r->baseline_note[0])
                fprintf(out, "\nBaseline: %s\n", r->baseline_note);
        fprintf(out, "\n");
        unsigned counts[_STATUS_COUNT];
        counts_of(r, counts);
        report_text_verdict(out, opt, r->verdict, counts, r->duration_ms);
}

static json_t *num_or_null(double v) { return v > 0 && isfinite(v) ? json_real(v) : json_null(); }

static json_t *json_shape(const struct train_report *r) {
        const struct train_shape *s = r->shape;
        return json_pack("{s:o, s:o, s:I, s:I, s:I, s:I, s:I, s:I, s:s, s:I, s:I, s:I}", "id", json_text(r->model_id),
                         "name", json_text(r->model_name), "layers", (json_int_t)s->layers, "hidden",
                         (json_int_t)s->hidden, "heads", (json_int_t)s->heads, "kv_heads", (json_int_t)s->kv_heads, "ffn",
                         (json_int_t)s->ffn, "vocab", (json_int_t)s->vocab, "mlp", est_mlp_name(s->mlp), "seq",
                         (json_int_t)s->seq, "micro_batch", (json_int_t)s->micro_batch, "layers_run",
                         (json_int_t)s->layers_run);
}

static json_t *json_figures(const struct train_figures *f) {
        json_t *o = json_object();
        json_object_set_new(o, "subject", json_text(f->step->subject));
        json_object_set_new(o, "cpu_device", json_boolean(f->cpu_device));
        json_object_set_new(o, "tflops", num_or_null(median(f->step)));
        json_object_set_new(o, "mfu", num_or_null(f->mfu));
        json_object_set_new(o, "whole_step_ms", num_or_null(f->whole_step_ms));
        json_object_set_new(o, "tokens_per_s", num_or_null(f->tokens_per_s));
        json_object_set_new(o, "samples_per_s", num_or_null(f->samples_per_s));
        json_object_set_new(o, "forward_ms", num_or_null(median(f->forward)));
        json_object_set_new(o, "logits_ms", num_or_null(median(f->logits)));
        json_object_set_new(o, "backward_ms", num_or_null(median(f->backward)));
        json_object_set_new(o, "allreduce_ms", num_or_null(median(f->allreduce)));
        json_object_set_new(o, "allreduce_verified", f->allreduce ? json_boolean(f->allreduce->verified) : json_null());
        json_object_set_new(o, "verified", json_boolean(f->step->verified));
        json_object_set_new(o, "status", json_string(status_name(f->step->status)));
        return o;
}

static json_t *json_torch(const struct train_torch_result *t) {
        json_t *o = json_object();
        json_object_set_new(o, "status", json_string(status_name(t->status)));
        json_object_set_new(o, "why", json_text(t->why));
        json_object_set_new(o, "torch_version", json_text(t->version));
        json_object_set_new(o, "device", json_text(t->device));
        json_object_set_new(o, "tflops", num_or_null(t->tflops));
        json_object_set_new(o, "tokens_per_s", num_or_null(t->tokens_per_s));
        json_object_set_new(o, "samples_per_s", num_or_null(t->samples_per_s));
        json_object_set_new(o, "forward_ms", num_or_null(t->forward_ms));
        json_object_set_new(o, "logits_ms", num_or_null(t->logits_ms));
        json_object_set_new(o, "backward_ms", num_or_null(t->backward_ms));
        return o;
}

char *train_report_json(const struct train_report *r) {
        json_t *root = envelope_new(TRAIN_SCHEMA, "bench train");
        if (!root)
                return NULL;
        json_object_set_new(root, "model", json_shape(r));
        json_object_set_new(root, "precision", json_text(r->precision));
        json_object_set_new(root, "backend", json_text(r->backend));
        json_object_set_new(root, "framework", json_text(r->framework));
        json_object_set_new(root, "gpus", json_integer(r->gpus));
        json_object_set_new(root, "steps", json_integer(r->steps));
        json_object_set_new(root, "warmup", json_integer(r->warmup));
        json_object_set_new(root, "timeout_s", json_integer(r->timeout_s));
        json_object_set_new(root, "flops",
                            json_pack("{s:o, s:o, s:o, s:o, s:o, s:s}", "layer", json_real_or_null(r->layer_flops),
                                      "logits", json_real_or_null(r->logit_flops), "proxy_step",
                                      json_real_or_null(r->proxy_flops), "model_step", json_real_or_null(r->model_flops),
                                      "layer_params", json_real_or_null(r->layer_params), "formula",
                                      "Narayanan et al. 2021 eq. 3 without recomputation, GEMM by GEMM"));
        json_t *figs = json_array();
        for (size_t i = 0; i < r->n_fig; i++)
                json_array_append_new(figs, json_figures(&r->fig[i]));
        json_object_set_new(root, "results", figs);
        json_object_set_new(root, "node_tokens_per_s", num_or_null(r->node_tokens_per_s));
        json_object_set_new(root, "torch", r->torch ? json_torch(r->torch) : json_null());
        json_object_set_new(root, "baseline_note", json_text(r->baseline_note ? r->baseline_note : ""));
        json_t *list = json_array();
        for (size_t i = 0; i < r->n_m; i++)
                json_array_append_new(list, bench_json_measurement(&r->m[i]));
        json_object_set_new(root, "measurements", list);
        unsigned counts[_STATUS_COUNT];
        counts_of(r, counts);
        json_object_set_new(root, "summary", envelope_summary(counts, r->verdict, r->duration_ms));
        char *s = json_dumps(root, JSON_INDENT(2) | JSON_REAL_PRECISION(10));
        json_decref(root);
        return s;
}
