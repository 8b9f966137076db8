/* burn: the stress test's verdict (docs/checks/burn.md). Pure functions of f->burn, the
 * facts burn/run.c gathered: whether each worker ran to the end, whether every product and
 * every memory word came back right, and whether GPUs of one model kept pace with each
 * other and with themselves. */
#include "burn/burn.h"
#include "checks/check.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void device_subject(const struct burn_device *d, char *buf, size_t size) {
        if (d->bus[0])
                snprintf(buf, size, "%s", d->bus);
        else
                snprintf(buf, size, "device %d (%s)", d->index, d->name);
}

/* One skip result when the burn did not run; true when it did (the caller judges). A burn
 * that could not run on a node with NVIDIA GPUs is an error: the level asked for it. */
static bool burn_ran(const struct check_info *self, const struct facts *f, struct report *rep) {
        const struct burn_facts *b = f->burn;
        if (b && b->ran)
                return true;
        struct result *r = result_new(rep, self, "host");
        const char *why = b ? b->not_run : "the stress test was not run";
        if (b && b->attempted && f->gpus.n > 0) {
                result_status(r, STATUS_ERROR, "the stress test could not run: %s", why);
                result_remedy(r, "make the GPUs usable by a CUDA program (gpu.cuda_driver says why not), then run "
                                 "gpuvet burn again");
        } else {
                result_status(r, STATUS_SKIP, "%s", why);
        }
        return false;
}

static void run_run(const struct check_info *self, const struct facts *f, struct report *rep) {
        if (!burn_ran(self, f, rep))
                return;
        const struct burn_facts *b = f->burn;
        double planned = 0;
        for (int m = 0; m < _BURN_MODE_COUNT; m++)
                planned += b->slices_ms[m] / 1e3;
        for (size_t i = 0; i < b->n_devs; i++) {
                const struct burn_device *d = &b->devs[i];
                char subject[160];
                device_subject(d, subject, sizeof(subject));
                struct result *r = result_new(rep, self, subject);
                result_evidence(r, "device", "%s (%s device %d)", d->name, d->backend, d->index);
                result_observed(r, "%s after %.0f s", burn_end_name(d->end), d->ended_s);
                result_expected(r, "every mode run for %.0f s", planned);
                switch (d->end) {
                case BURN_END_DONE:
                        result_status(r, STATUS_PASS, "ran every mode to the end (%.0f s)", d->ended_s);
                        break;
                case BURN_END_STOPPED:
                        result_status(r, STATUS_ERROR, "interrupted after %.0f s of %.0f s: the GPU was not cleared",
                                      d->ended_s, planned);
                        result_remedy(r, "run gpuvet burn again for its whole duration");
                        break;
                case BURN_END_HUNG:
                        result_status(r, STATUS_FAIL, "the GPU stopped answering under load: %s", d->error);
                        result_remedy(r, "drain the node; look for Xid errors (gpu.xid), reset the GPU (nvidia-smi -r) "
                                         "or reboot, and rerun the burn; a GPU that hangs again goes to the vendor");
                        break;
                case BURN_END_ERROR:
                        result_status(r, STATUS_ERROR, "the load could not run: %s", d->error);
                        result_remedy(r, "fix what the message names (memory held by other processes, a missing "
                                         "library), then rerun");
                        break;
                case BURN_END_CRASHED:
                case BURN_END_NOT_RUN:
                        result_status(r, STATUS_ERROR, "the worker %s: %s",
                                      d->end == BURN_END_CRASHED ? "died" : "never started",
                                      d->error[0] ? d->error : "no reason given");
                        result_remedy(r, "look for Xid errors and the kernel log around the time of the run; rerun");
                        break;
                }
        }
}

/* The digest most devices of d's model and precision agree on, and how many share it;
 * false when fewer than two such devices have one. */
static bool model_digest(const struct burn_facts *b, const struct burn_device *d, uint64_t *digest,
                         size_t *agreeing, size_t *peers) {
        size_t best = 0, n = 0;
        for (size_t i = 0; i < b->n_devs; i++) {
                const struct burn_device *a = &b->devs[i];
                if (!a->have_digest || strcmp(a->name, d->name) != 0 || strcmp(a->precision, d->precision) != 0 ||
                    strcmp(a->workload, d->workload) != 0)
                        continue;
                n++;
                size_t same = 0;
                for (size_t j = 0; j < b->n_devs; j++) {
                        const struct burn_device *c = &b->devs[j];
                        same += c->have_digest && c->digest == a->digest && strcmp(c->name, d->name) == 0 &&
                                strcmp(c->precision, d->precision) == 0 && strcmp(c->workload, d->workload) == 0;
                }
                if (same > best) {
                        best = same;
                        *digest = a->digest;
                }
        }
        *agreeing = best;
        *peers = n;
        return n >= 2;
}

static void fault_text(const struct burn_fault *x, char *buf, size_t size) {
        if (x->mode == BURN_MODE_MEMTEST)
                snprintf(buf, size, "offset 0x%llx: wrote 0x%llx, read 0x%llx (bits 0x%llx, %s)",
                         (unsigned long long)x->where_a, (unsigned long long)x->mem_expected,
                         (unsigned long long)x->mem_got, (unsigned long long)(x->mem_expected ^ x->mem_got), x->what);
        else
                snprintf(buf, size, "element (%llu, %llu): %.9g, expected %.9g (%s)", (unsigned long long)x->where_a,
                         (unsigned long long)x->where_b, x->got, x->expected, x->what);
}

static void first_faults(struct result *r, const struct burn_device *d, enum burn_mode kind) {
        unsigned shown = 0;
        for (unsigned i = 0; i < d->n_faults && shown < 4; i++) {
                const struct burn_fault *x = &d->faults[i];
                if ((kind == BURN_MODE_MEMTEST) != (x->mode == BURN_MODE_MEMTEST))
                        continue;
                char text[192], key[24];
                fault_text(x, text, sizeof(text));
                snprintf(key, sizeof(key), "fault%u", shown++);
                result_evidence(r, key, "%s", text);
        }
}

static void run_compute(const struct check_info *self, const struct facts *f, struct report *rep) {
        if (!burn_ran(self, f, rep))
                return;
        const struct burn_facts *b = f->burn;
        for (size_t i = 0; i < b->n_devs; i++) {
                const struct burn_device *d = &b->devs[i];
                char subject[160];
                device_subject(d, subject, sizeof(subject));
                struct result *r = result_new(rep, self, subject);
                if (!d->verifications) {
                        result_status(r, STATUS_SKIP, "no product was verified (%s)",
                                      d->end == BURN_END_DONE ? "no GEMM mode ran" : "see burn.run");
                        continue;
                }
                result_evidence(r, "workload", "%s", d->workload);
                result_evidence(r, "products", "%llu in %.0f s, %llu verified batches", (unsigned long long)d->products,
                                d->load_seconds, (unsigned long long)d->verifications);
                result_evidence(r, "digest", "%016llx", (unsigned long long)d->digest);
                uint64_t majority = 0;
                size_t agreeing = 0, peers = 0;
                bool compared = model_digest(b, d, &majority, &agreeing, &peers);
                bool odd = compared && majority != d->digest;
                result_expected(r, "every product equal to the host reference and, bit for bit, to the first%s",
                                compared ? " and to the other GPUs of its model" : "");
                if (d->faulty_vs_host || d->faulty_vs_first || d->digest_changed || odd) {
                        result_observed(r, "%llu of %llu sampled elements off the host reference, %llu of %llu elements "
                                           "differing from the first result%s%s",
                                        (unsigned long long)d->faulty_vs_host, (unsigned long long)d->elements_sampled,
                                        (unsigned long long)d->faulty_vs_first, (unsigned long long)d->elements_compared,
                                        d->digest_changed ? ", results changing between products" : "",
                                        odd ? ", a result different from the other GPUs'" : "");
                        result_status(r, STATUS_FAIL, "silent data corruption: the GPU computed wrong results under load");
                        if (odd)
                                result_evidence(r, "peers", "%zu of %zu GPUs of this model agree on %016llx", agreeing,
                                                peers, (unsigned long long)majority);
                        first_faults(r, d, BURN_MODE_GEMM);
                        result_remedy(r, "drain the node and take the GPU out of service; rerun gpuvet burn to confirm, "
                                         "then RMA it (wrong results without an error are not recoverable by reset)");
                } else {
                        result_observed(r, "%llu sampled and %llu compared elements, none wrong",
                                        (unsigned long long)d->elements_sampled, (unsigned long long)d->elements_compared);
                        result_status(r, STATUS_PASS, "%llu products, every verified one right%s",
                                      (unsigned long long)d->products,
                                      compared ? " and identical to its peers'" : "");
                }
        }
}

static void run_memory(const struct check_info *self, const struct facts *f, struct report *rep) {
        if (!burn_ran(self, f, rep))
                return;
        const struct burn_facts *b = f->burn;
        for (size_t i = 0; i < b->n_devs; i++) {
                const struct burn_device *d = &b->devs[i];
                char subject[160];
                device_subject(d, subject, sizeof(subject));
                struct result *r = result_new(rep, self, subject);
                if (!b->slices_ms[BURN_MODE_MEMTEST]) {
                        result_status(r, STATUS_SKIP, "memtest not selected");
                        continue;
                }
                if (!d->mem_words) {
                        result_status(r, STATUS_SKIP, "no memory was tested (see burn.run)");
                        continue;
                }
                result_evidence(r, "region", "%.2f GiB", d->mem_bytes / 1073741824.0);
                result_evidence(r, "seed", "%s", d->mem_seed);
                result_observed(r, "%llu words checked in %llu passes, %llu wrong", (unsigned long long)d->mem_words,
                                (unsigned long long)d->mem_passes, (unsigned long long)d->mem_errors);
                result_expected(r, "every word reads back what was written");
                if (d->mem_errors) {
                        result_status(r, STATUS_FAIL, "%llu memory words read back wrong", (unsigned long long)d->mem_errors);
                        first_faults(r, d, BURN_MODE_MEMTEST);
                        result_remedy(r, "drain the node; check gpu.row_remapper and ECC counters; a reset lets pending "
                                         "row remaps take effect, after which rerun the memtest; errors that stay mean RMA");
                } else {
                        result_status(r, STATUS_PASS, "%.2f GiB tested, %llu passes, no error", d->mem_bytes / 1073741824.0,
                                      (unsigned long long)d->mem_passes);
                }
        }
}

static int cmp_double(const void *a, const void *b) {
        double x = *(const double *)a, y = *(const double *)b;
        return x < y ? -1 : x > y;
}

/* The median of d's GEMM-mode rates in [from, to) of them (by order), 0 when none. */
static double median_rate(const struct burn_device *d, size_t from, size_t to) {
        double v[to > from ? to - from : 1];
        size_t n = 0, k = 0;
        for (size_t i = 0; i < d->n_rates; i++) {
                if (d->rates[i].mode != BURN_MODE_GEMM)
                        continue;
                if (k >= from && k < to)
                        v[n++] = d->rates[i].tflops;
                k++;
        }
        if (!n)
                return 0;
        qsort(v, n, sizeof(v[0]), cmp_double);
        return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static size_t gemm_rates(const struct burn_device *d) {
        size_t n = 0;
        for (size_t i = 0; i < d->n_rates; i++)
                n += d->rates[i].mode == BURN_MODE_GEMM;
        return n;
}

/* Fewer rates than this make no trend: the first and last quarters need two ticks each. */
#define DROP_MIN_RATES 8

static void run_throughput(const struct check_info *self, const struct facts *f, struct report *rep) {
        if (!burn_ran(self, f, rep))
                return;
        const struct burn_facts *b = f->burn;
        const struct policy_thresholds *t = check_thresholds(f);
        for (size_t i = 0; i < b->n_devs; i++) {
                const struct burn_device *d = &b->devs[i];
                char subject[160];
                device_subject(d, subject, sizeof(subject));
                struct result *r = result_new(rep, self, subject);
                size_t n = gemm_rates(d);
                if (!n) {
                        result_status(r, STATUS_SKIP, "no GEMM throughput was measured");
                        continue;
                }
                double mine = median_rate(d, 0, n), best = mine;
                const struct burn_device *leader = d;
                for (size_t j = 0; j < b->n_devs; j++) {
                        const struct burn_device *o = &b->devs[j];
                        if (strcmp(o->name, d->name) != 0 || strcmp(o->precision, d->precision) != 0 || !gemm_rates(o))
                                continue;
                        double m = median_rate(o, 0, gemm_rates(o));
                        if (m > best) {
                                best = m;
                                leader = o;
                        }
                }
                double first = n >= DROP_MIN_RATES ? median_rate(d, 0, n / 4) : 0;
                double last = n >= DROP_MIN_RATES ? median_rate(d, n - n / 4, n) : 0;
                result_observed(r, "median %.3f TFLOPS (%s)", mine, d->precision);
                result_evidence(r, "rates", "%zu ticks of %u ms", n, BURN_TICK_MS);
                if (first > 0)
                        result_evidence(r, "trend", "first quarter %.3f, last quarter %.3f TFLOPS", first, last);
                char why[256] = "";
                if (leader != d && mine < best * (1 - t->burn_throughput_spread))
                        snprintf(why, sizeof(why), "%.0f%% below the best GPU of its model (%s, %.3f TFLOPS)",
                                 (1 - mine / best) * 100, leader->bus[0] ? leader->bus : leader->name, best);
                else if (first > 0 && last < first * (1 - t->burn_throughput_drop))
                        snprintf(why, sizeof(why), "fell %.0f%% from the first quarter of the run to the last",
                                 (1 - last / first) * 100);
                result_expected(r, "within %.0f%% of the best GPU of its model, and no fall of %.0f%% over the run",
                                t->burn_throughput_spread * 100, t->burn_throughput_drop * 100);
                if (why[0]) {
                        result_status(r, STATUS_FAIL, "throughput %s", why);
                        result_remedy(r, "look at the GPU's clocks and clock-event reasons during the run (power brake, "
                                         "thermal slowdown: burn telemetry), its cooling and power cabling, and its "
                                         "PCIe/NVLink health; compare after a reset");
                } else {
                        result_status(r, STATUS_PASS, "%.3f TFLOPS sustained%s", mine,
                                      leader != d ? ", in line with its peers" : "");
                }
        }
}

CHECK_INFO(burn_run, "burn", "burn.run", LEVEL_FULL, 0,
           "Every GPU's stress-test worker ran to the end: none hung, crashed or failed to start", run_run);

CHECK_INFO(burn_compute, "burn", "burn.compute", LEVEL_FULL, 0,
           "Every verified GEMM under load equals the host reference, the GPU's first result and its peers'",
           run_compute);

CHECK_INFO(burn_memory, "burn", "burn.memory", LEVEL_FULL, 0,
           "Every word of the memory test reads back what was written", run_memory);

CHECK_INFO(burn_throughput, "burn", "burn.throughput", LEVEL_FULL, 0,
           "Sustained GEMM throughput keeps pace with the GPU's peers of the same model and does not fall",
           run_throughput);
