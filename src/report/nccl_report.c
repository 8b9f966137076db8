#include "report/nccl_report.h"

#include <jansson.h>
#include <math.h>
#include <string.h>

#include "report/bench_json.h"
#include "report/envelope.h"
#include "core/json_real.h"
#include "core/json_text.h"
#include "report/report_json.h"
#include "report/text_safe.h"

const char nccl_remedy[] =
        "Bus bandwidth below what the node's links carry. Look at NCCL's own view first: rerun with "
        "NCCL_DEBUG=INFO and read the chosen transports (P2P/NVLink, SHM, NET/IB) and rings; check "
        "`gpuvet check` for NVLink links down, PCIe links trained below their width or speed, ACS "
        "redirecting peer traffic (pcie.acs) and IOMMU translation; for multi-node runs check the "
        "RDMA ports' state and rate, GPUDirect RDMA (nvidia-peermem) and NCCL_IB_HCA / "
        "NCCL_SOCKET_IFNAME. A single slow GPU drags every collective: compare `gpuvet bench p2p`.";

/* "1 GiB", "64 MiB", "8 B": sizes as a person reads them; exact counts are beside them. */
static void fmt_size(char *buf, size_t size, size_t bytes) {
        static const char *const unit[] = {"B", "KiB", "MiB", "GiB", "TiB"};
        size_t u = 0;
        double v = (double)bytes;
        while (v >= 1024 && u < 4 && fmod(v, 1024) == 0) {
                v /= 1024;
                u++;
        }
        snprintf(buf, size, "%.0f %s", v, unit[u]);
}

static const struct nccl_row *find_row(const struct nccl_job_result *job, enum nccl_coll c, size_t bytes,
                                       bool in_place) {
        for (size_t i = 0; i < job->n_rows; i++)
                if (job->rows[i].coll == c && job->rows[i].bytes == bytes && job->rows[i].in_place == in_place)
                        return &job->rows[i];
        return NULL;
}

static void print_half(FILE *out, const struct nccl_row *r) {
        if (!r) {
                fprintf(out, "  %10s %7s %7s %6s", "", "", "", "");
                return;
        }
        char wrong[24];
        if (!r->verified)
                snprintf(wrong, sizeof(wrong), "N/A");
        else
                snprintf(wrong, sizeof(wrong), "%.0f", r->wrong);
        fprintf(out, "  %10.2f %7.2f %7.2f %6s", r->time_us, r->algbw_gbps, r->busbw_gbps, wrong);
}

/* One collective's rows in nccl-tests' columns: out-of-place, then in-place. */
static void print_table(FILE *out, const struct nccl_report *rep, enum nccl_coll c) {
        const struct nccl_job_result *job = rep->job;
        const struct nccl_run_options *o = rep->run;
        fprintf(out, "\n%s\n", nccl_coll_name(c));
        fprintf(out, "%47s  %-33s  %s\n", "", "out-of-place", "in-place");
        fprintf(out, "%12s %12s %8s %6s %5s  %10s %7s %7s %6s  %10s %7s %7s %6s\n", "size(B)", "count", "type",
                "redop", "root", "time(us)", "algbw", "busbw", "#wrong", "time(us)", "algbw", "busbw", "#wrong");
        for (size_t i = 0; i < job->n_rows; i++) {
                const struct nccl_row *r = &job->rows[i];
                if (r->coll != c)
                        continue;
                /* one line per size: the size's first row leads */
                bool first = true;
                for (size_t k = 0; k < i && first; k++)
                        first = !(job->rows[k].coll == c && job->rows[k].bytes == r->bytes);
                if (!first)
                        continue;
                fprintf(out, "%12zu %12zu %8s %6s %5d", r->bytes, r->count, nccl_dtype_name(o->dtype),
                        nccl_coll_reduces(c) ? nccl_redop_name(o->op) : "none", nccl_coll_rooted(c) ? o->root : -1);
                print_half(out, find_row(job, c, r->bytes, false));
                print_half(out, find_row(job, c, r->bytes, true));
                fputc('\n', out);
        }
}

void nccl_report_text(FILE *out, const struct nccl_report *r, const struct text_options *opt) {
        const struct nccl_job_result *job = r->job;
        const struct nccl_run_options *o = r->run;
        char safe[512], a[32], b[32];
        if (job->have_info) {
                char nodes[48] = "an unknown number of nodes";
                if (r->nodes > 0)
                        snprintf(nodes, sizeof(nodes), "%d node%s", r->nodes, r->nodes == 1 ? "" : "s");
                fprintf(out, "%s: %d rank%s in %d process%s on %s; this process: %s",
                        text_safe(job->info.library, safe, sizeof(safe)), job->info.nranks,
                        job->info.nranks == 1 ? "" : "s", job->info.nprocs, job->info.nprocs == 1 ? "" : "es", nodes,
                        text_safe(job->info.device_name, safe, sizeof(safe)));
                for (int i = 0; i < job->info.n_local; i++)
                        fprintf(out, "%s%d (%s)", i ? ", " : " x", job->info.cuda_index[i],
                                text_safe(job->info.bus_ids[i], safe, sizeof(safe)));
                fputc('\n', out);
        }
        fmt_size(a, sizeof(a), o->sweep.min_bytes);
        fmt_size(b, sizeof(b), o->sweep.max_bytes);
        fprintf(out, "%s, %s; sizes %s to %s, ", nccl_dtype_name(o->dtype), nccl_redop_name(o->op), a, b);
        if (o->sweep.step_factor > 1)
                fprintf(out, "x%lu", o->sweep.step_factor);
        else
                fprintf(out, "+%zu B", o->sweep.step_bytes);
        fprintf(out, "; %u iterations after %u warm-up; results %s\n", o->iters, o->warmup,
                o->check ? "verified" : "not verified (--check 0)");
        if (r->topo_file && r->topo_bytes < 0)
                fprintf(out, "NCCL_TOPO_FILE %s cannot be read: %s\n", text_safe(r->topo_file, safe, sizeof(safe)),
                        strerror(r->topo_errno));
        if (r->fabric->peak_gbps > 0)
                fprintf(out, "Expected bus bandwidth: %.0f GB/s, %s\n", r->fabric->peak_gbps, r->fabric->source);
        for (size_t i = 0; i < o->n_colls; i++)
                print_table(out, r, o->colls[i]);
        fprintf(out, "(time per call in us; algbw and busbw in GB/s as nccl-tests counts them)\n\n");

        unsigned counts[_STATUS_COUNT] = {0};
        const char *remedy = NULL;
        for (size_t i = 0; i < r->verdicts->n; i++) {
                const struct measurement *m = &r->verdicts->m[i];
                struct measurement_outcome oc;
                measurement_outcome(m, nccl_remedy, &oc);
                counts[m->status]++;
                char glyph[32];
                fprintf(out, "%s %-15s %s\n", report_text_glyph(m->status, opt, glyph, sizeof(glyph)), m->name,
                        text_safe(m->summary, safe, sizeof(safe)));
                if (oc.expected[0] && m->status != STATUS_PASS)
                        fprintf(out, "    expected: %s\n", text_safe(oc.expected, safe, sizeof(safe)));
                if (oc.remedy)
                        remedy = oc.remedy;
        }
        for (size_t i = 0; i < r->n_outcomes; i++) {
                const struct nccl_rank_outcome *x = &r->outcomes[i];
                if (job->have_info && x->rank == r->own_rank)
                        continue; /* this rank's own failure is the verdicts' */
                if (x->state == NCCL_RANK_MISSING)
                        fprintf(out, "rank %d: did not report (its gpuvet ended before the gather, or never started)\n",
                                x->rank);
                else if (x->state == NCCL_RANK_FAILED)
                        fprintf(out, "rank %d: %s\n", x->rank, text_safe(x->message, safe, sizeof(safe)));
        }
        if (job->failed && job->log) {
                fprintf(out, "\nNCCL's output (last lines):\n");
                text_safe_write(out, job->log);
                if (job->log[0] && job->log[strlen(job->log) - 1] != '\n')
                        fputc('\n', out);
        }
        if (remedy)
                fprintf(out, "\n    remedy: %s\n", remedy);
        fputc('\n', out);
        report_text_verdict(out, opt, r->verdict, counts, r->duration_ms);
}

static json_t *row_half(const struct nccl_row *r) {
        json_t *o = json_pack("{s:o, s:o, s:o, s:b}", "time_us", json_real_or_null(r->time_us), "algbw_gbps",
                              json_real_or_null(r->algbw_gbps), "busbw_gbps", json_real_or_null(r->busbw_gbps),
                              "verified", r->verified);
        json_object_set_new(o, "wrong", r->verified ? json_integer((json_int_t)r->wrong) : json_null());
        return o;
}

char *nccl_report_json(const struct nccl_report *r) {
        const struct nccl_job_result *job = r->job;
        const struct nccl_run_options *o = r->run;
        json_t *root = envelope_new(NCCL_SCHEMA, "bench nccl");
        json_t *colls = json_array();
        for (size_t i = 0; i < o->n_colls; i++)
                json_array_append_new(colls, json_string(nccl_coll_name(o->colls[i])));
        json_t *opts = json_pack("{s:o, s:I, s:I, s:I, s:I, s:s, s:s, s:i, s:i, s:i, s:b, s:b, s:b, s:i, s:i}",
                                 "collectives", colls, "min_bytes", (json_int_t)o->sweep.min_bytes, "max_bytes",
                                 (json_int_t)o->sweep.max_bytes, "step_factor", (json_int_t)o->sweep.step_factor,
                                 "step_bytes", (json_int_t)o->sweep.step_bytes, "datatype", nccl_dtype_name(o->dtype),
                                 "op", nccl_redop_name(o->op), "root", o->root, "iters", (int)o->iters, "warmup",
                                 (int)o->warmup, "check", o->check, "out_of_place", o->out_of_place, "in_place",
                                 o->in_place, "hang_timeout_s", (int)r->hang_s, "timeout_s", (int)r->timeout_s);
        json_object_set_new(root, "options", opts);

        json_t *jobj = json_object();
        json_object_set_new(jobj, "launcher", json_text(r->launcher));
        json_object_set_new(jobj, "nodes", r->nodes > 0 ? json_integer(r->nodes) : json_null());
        if (job->have_info) {
                json_object_set_new(jobj, "library", json_text(job->info.library));
                json_object_set_new(jobj, "ranks", json_integer(job->info.nranks));
                json_object_set_new(jobj, "processes", json_integer(job->info.nprocs));
                json_t *gpus = json_array();
                for (int i = 0; i < job->info.n_local; i++)
                        json_array_append_new(gpus, json_pack("{s:i, s:o, s:o}", "cuda_index", job->info.cuda_index[i],
                                                              "pci_bus_id", json_text(job->info.bus_ids[i]), "name",
                                                              json_text(job->info.device_name)));
                json_object_set_new(jobj, "gpus", gpus);
        }
        json_t *env = json_object();
        for (char **e = r->environment; e && *e; e++) {
                const char *eq = strchr(*e, '=');
                if (!eq)
                        continue;
                char name[128];
                snprintf(name, sizeof(name), "%.*s", (int)(eq - *e), *e);
                json_object_set_new(env, name, json_text(eq + 1));
        }
        json_object_set_new(jobj, "environment", env);
        json_object_set_new(jobj, "rendezvous", r->rendezvous && r->rendezvous[0] ? json_text(r->rendezvous) : json_null());
        json_t *ranks = json_null();
        if (r->n_outcomes) {
                static const char *const state_names[] = {"ok", "failed", "missing"};
                ranks = json_array();
                for (size_t i = 0; i < r->n_outcomes; i++) {
                        const struct nccl_rank_outcome *x = &r->outcomes[i];
                        json_array_append_new(ranks, json_pack("{s:i, s:s, s:o}", "rank", x->rank, "state",
                                                               state_names[x->state], "error",
                                                               x->message[0] ? json_text(x->message) : json_null()));
                }
        }
        json_object_set_new(jobj, "outcomes", ranks);
        json_t *topo = json_null();
        if (r->topo_file)
                topo = json_pack("{s:o, s:o, s:o}", "path", json_text(r->topo_file), "bytes",
                                 r->topo_bytes >= 0 ? json_integer(r->topo_bytes) : json_null(), "error",
                                 r->topo_bytes >= 0 ? json_null() : json_text(strerror(r->topo_errno)));
        json_object_set_new(jobj, "topology_file", topo);
        json_object_set_new(root, "job", jobj);

        json_t *fabric = json_object();
        json_object_set_new(fabric, "path", json_text(r->fabric->path));
        json_object_set_new(fabric, "expected_busbw_gbps",
                            r->fabric->peak_gbps > 0 ? json_real(r->fabric->peak_gbps) : json_null());
        json_object_set_new(fabric, "source", r->fabric->source[0] ? json_text(r->fabric->source) : json_null());
        json_object_set_new(root, "fabric", fabric);

        json_t *rows = json_array();
        for (size_t i = 0; i < job->n_rows; i++) {
                const struct nccl_row *row = &job->rows[i];
                json_t *jr = json_pack("{s:s, s:s, s:I, s:I}", "collective", nccl_coll_name(row->coll), "placement",
                                       row->in_place ? "in_place" : "out_of_place", "size_bytes",
                                       (json_int_t)row->bytes, "count", (json_int_t)row->count);
                json_t *half = row_half(row);
                json_object_update_missing(jr, half);
                json_decref(half);
                json_array_append_new(rows, jr);
        }
        json_object_set_new(root, "sweep", rows);

        json_t *ms = json_array();
        unsigned counts[_STATUS_COUNT] = {0};
        for (size_t i = 0; i < r->verdicts->n; i++) {
                const struct measurement *m = &r->verdicts->m[i];
                counts[m->status]++;
                struct measurement_outcome oc;
                measurement_outcome(m, nccl_remedy, &oc);
                json_t *mo = bench_json_measurement(m);
                report_json_outcome(mo, oc.observed[0] ? oc.observed : NULL, oc.expected[0] ? oc.expected : NULL,
                                    oc.remedy);
                json_array_append_new(ms, mo);
        }
        json_object_set_new(root, "measurements", ms);
        json_t *fail = json_null();
        if (job->failed) {
                fail = json_pack("{s:o, s:b, s:b, s:o}", "error", json_text(job->error), "hung", job->hung, "timed_out",
                                 job->timed_out, "nccl_output", job->log ? json_text(job->log) : json_null());
                if (job->have_step)
                        json_object_set_new(fail, "step",
                                            json_pack("{s:s, s:s, s:I}", "collective", nccl_coll_name(job->step_coll),
                                                      "placement", job->step_in_place ? "in_place" : "out_of_place",
                                                      "size_bytes", (json_int_t)job->step_bytes));
        }
        json_object_set_new(root, "failure", fail);
        json_object_set_new(root, "summary", envelope_summary(counts, r->verdict, r->duration_ms));
        char *s = json_dumps(root, JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(10));
        json_decref(root);
        return s;
}
