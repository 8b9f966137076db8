/* burn: the stress test's verdict (docs/checks/burn.md). Pure functions of f->burn, the
 * facts burn/run.c gathered: whether each worker ran to the end, whether every product and
 * every memory word came back right, and whether GPUs of one model kept pace with each
 * other and with themselves. */
#include "results/burn.h"
#include "checks/check.h"
#include "core/array.h"

#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void device_subject(const struct burn_device *d, char *buf, size_t size) {
        if (d->bus[0])
                snprintf(buf, size, "%s", d->bus);
        else
                snprintf(buf, size, "device %d (%s)", d->index, d->name);
}

/* A result of self on device d. */
static struct result *device_result(const struct check_info *self, const struct burn_device *d, struct report *rep) {
        char subject[160];
        device_subject(d, subject, sizeof(subject));
        return result_new(rep, self, subject);
}

/* One skip result when the burn did not run; true when it did (the caller judges). A burn
 * that could not run on a node with NVIDIA GPUs is an error: the level asked for it. So is
 * one that found nothing at all to load, said once by burn.run: a stress test that stressed
 * nothing is no evidence, and a pipeline's "burn must pass" must not pass on a node whose
 * GPUs are gone. A replayed capture (not attempted) only skips. */
static bool burn_ran(const struct check_info *self, const struct facts *f, struct report *rep) {
        const struct burn_facts *b = f->burn;
        if (b && b->ran)
                return true;
        struct result *r = result_new(rep, self, "host");
        const char *why = b ? b->not_run : "the stress test was not run";
        static const char nothing[] = "no GPU to stress";
        if (b && b->attempted && f->gpus.n > 0) {
                result_status(r, STATUS_ERROR, "the stress test could not run: %s", why);
                result_remedy(r, "make the GPUs usable by a CUDA program (gpu.cuda_driver says why not), then run "
                                 "gpuvet burn again");
        } else if (b && b->attempted && strcmp(self->id, "burn.run") == 0) {
                if (strncmp(why, nothing, sizeof(nothing) - 1) == 0)
                        result_status(r, STATUS_ERROR, "%s", why);
                else
                        result_status(r, STATUS_ERROR, "%s: %s", nothing, why);
                if (b->opt.allow_cpu)
                        result_remedy(r, "run the burn on a node whose NVIDIA GPUs the driver shows, or give "
                                         "--allow-cpu an OpenCL CPU device to load (PoCL)");
                else
                        result_remedy(r, "run the burn on a node whose NVIDIA GPUs the driver shows (the gpu.* "
                                         "checks say why not); to load a CPU OpenCL device instead (tests, demos), "
                                         "add --allow-cpu");
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
                struct result *r = device_result(self, d, rep);
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
                        /* the runner's error is the whole story already ("the worker died:
                         * Killed", "the worker exited (status 1) without a report") */
                        result_status(r, STATUS_ERROR, "%s",
                                      d->error[0] ? d->error : "the worker died without saying why");
                        result_remedy(r, "look for Xid errors and the kernel log around the time of the run; rerun");
                        break;
                case BURN_END_NOT_RUN:
                        result_status(r, STATUS_ERROR, "the worker never started: %s",
                                      d->error[0] ? d->error : "no reason given");
                        result_remedy(r, "look for Xid errors and the kernel log around the time of the run; rerun");
                        break;
                }
        }
}

CHECK_INFO(burn_run, "burn", "burn.run", LEVEL_FULL, NEED_BURN,
           "Every GPU's stress-test worker ran to the end: none hung, crashed or failed to start", run_run);

/* Whether the device's own comparisons found a wrong result (host, first result, a result
 * that changed): it fails on its own, and its digest says nothing of its peers'. */
static bool own_faults(const struct burn_device *d) {
        bool changed = false;
        for (int m = 0; m < _BURN_MODE_COUNT; m++)
                changed |= d->loads[m].digest_changed;
        return d->faulty_vs_host || d->faulty_vs_first || changed;
}

/* Among the devices of d's model whose own comparisons found nothing: the digest most of
 * them agree on for mode m's load (same workload), how many share it, and how many have
 * one; false when fewer than two do. */
static bool model_digest(const struct burn_facts *b, const struct burn_device *d, enum burn_mode m,
                         uint64_t *digest, size_t *agreeing, size_t *peers) {
        const struct burn_load *mine = &d->loads[m];
        size_t best = 0, n = 0;
        for (size_t i = 0; i < b->n_devs; i++) {
                const struct burn_load *a = &b->devs[i].loads[m];
                if (!a->have_digest || own_faults(&b->devs[i]) || strcmp(b->devs[i].name, d->name) != 0 ||
                    strcmp(a->workload, mine->workload) != 0)
                        continue;
                n++;
                size_t same = 0;
                for (size_t j = 0; j < b->n_devs; j++) {
                        const struct burn_load *c = &b->devs[j].loads[m];
                        same += c->have_digest && !own_faults(&b->devs[j]) && c->digest == a->digest &&
                                strcmp(b->devs[j].name, d->name) == 0 && strcmp(c->workload, mine->workload) == 0;
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
                struct result *r = device_result(self, d, rep);
                if (!d->verifications) {
                        result_status(r, STATUS_SKIP, "no product was verified (%s)",
                                      d->end == BURN_END_DONE ? "no GEMM mode ran" : "see burn.run");
                        continue;
                }
                result_evidence(r, "products", "%llu in %.0f s, %llu verified batches", (unsigned long long)d->products,
                                d->load_seconds, (unsigned long long)d->verifications);
                /* Per GEMM-type mode (each runs its own precision): a result that changed, and
                 * a digest its peers do not share. The peers are the GPUs of its model whose
                 * own comparisons found nothing; a strict majority among them tells the odd
                 * one out, and without one (two GPUs that disagree) every GPU off the largest
                 * group fails: one of them computes wrong, and the node cannot be cleared. */
                bool changed = false, odd = false, compared = false;
                char peers_text[200] = "";
                for (int m = 0; m < _BURN_MODE_COUNT; m++) {
                        const struct burn_load *l = &d->loads[m];
                        if (!l->have_digest)
                                continue;
                        char key[24];
                        snprintf(key, sizeof(key), "digest_%s", burn_mode_name((enum burn_mode)m));
                        result_evidence(r, key, "%016llx (%s)", (unsigned long long)l->digest, l->workload);
                        changed |= l->digest_changed;
                        uint64_t majority = 0;
                        size_t agreeing = 0, peers = 0;
                        if (!model_digest(b, d, (enum burn_mode)m, &majority, &agreeing, &peers))
                                continue;
                        compared = true;
                        if (own_faults(d) || agreeing == peers)
                                continue;
                        if (majority != l->digest || agreeing * 2 <= peers) {
                                odd = true;
                                snprintf(peers_text, sizeof(peers_text), "%s: %zu of %zu GPUs of this model agree on %016llx%s",
                                         burn_mode_name((enum burn_mode)m), agreeing, peers, (unsigned long long)majority,
                                         agreeing * 2 <= peers ? " (no majority: which one is wrong cannot be told)" : "");
                        }
                }
                result_expected(r, "every product equal to the host reference and, bit for bit, to the first%s",
                                compared ? " and to the other GPUs of its model" : "");
                if (d->faulty_vs_host || d->faulty_vs_first || changed || odd) {
                        result_observed(r, "%llu of %llu sampled elements off the host reference, %llu of %llu elements "
                                           "differing from the first result%s%s",
                                        (unsigned long long)d->faulty_vs_host, (unsigned long long)d->elements_sampled,
                                        (unsigned long long)d->faulty_vs_first, (unsigned long long)d->elements_compared,
                                        changed ? ", results changing between products" : "",
                                        odd ? ", a result different from the other GPUs'" : "");
                        result_status(r, STATUS_FAIL, "silent data corruption: the GPU computed wrong results under load");
                        if (odd)
                                result_evidence(r, "peers", "%s", peers_text);
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

CHECK_INFO(burn_compute, "burn", "burn.compute", LEVEL_FULL, NEED_BURN,
           "Every verified GEMM under load equals the host reference, the GPU's first result and its peers'",
           run_compute);

static void run_memory(const struct check_info *self, const struct facts *f, struct report *rep) {
        if (!burn_ran(self, f, rep))
                return;
        const struct burn_facts *b = f->burn;
        for (size_t i = 0; i < b->n_devs; i++) {
                const struct burn_device *d = &b->devs[i];
                struct result *r = device_result(self, d, rep);
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

CHECK_INFO(burn_memory, "burn", "burn.memory", LEVEL_FULL, NEED_BURN,
           "Every word of the memory test reads back what was written", run_memory);

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
                struct result *r = device_result(self, d, rep);
                size_t n = gemm_rates(d);
                if (!n) {
                        result_status(r, STATUS_SKIP, "no GEMM throughput was measured");
                        continue;
                }
                double mine = median_rate(d, 0, n), best = mine;
                const struct burn_device *leader = d;
                for (size_t j = 0; j < b->n_devs; j++) {
                        const struct burn_device *o = &b->devs[j];
                        if (strcmp(o->name, d->name) != 0 ||
                            strcmp(o->loads[BURN_MODE_GEMM].precision, d->loads[BURN_MODE_GEMM].precision) != 0 ||
                            !gemm_rates(o))
                                continue;
                        double m = median_rate(o, 0, gemm_rates(o));
                        if (m > best) {
                                best = m;
                                leader = o;
                        }
                }
                double first = n >= DROP_MIN_RATES ? median_rate(d, 0, n / 4) : 0;
                double last = n >= DROP_MIN_RATES ? median_rate(d, n - n / 4, n) : 0;
                result_observed(r, "median %.3f TFLOPS (%s)", mine, d->loads[BURN_MODE_GEMM].precision);
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

CHECK_INFO(burn_throughput, "burn", "burn.throughput", LEVEL_FULL, NEED_BURN,
           "Sustained GEMM throughput keeps pace with the GPU's peers of the same model and does not fall",
           run_throughput);

/* ---- telemetry --------------------------------------------------------------------- */

/* The device's telemetry, or NULL after a skip result saying why there is none. */
static const struct burn_telemetry *telemetry_of(const struct check_info *self, const struct facts *f,
                                                 const struct burn_device *d, struct report *rep, struct result **ret) {
        *ret = device_result(self, d, rep);
        if (d->tele.nvml && d->tele.n_samples)
                return &d->tele;
        const char *note = f->burn->telemetry_note;
        if (!d->bus[0])
                result_status(*ret, STATUS_SKIP, "no telemetry: the device has no PCI address to find it in NVML");
        else
                result_status(*ret, STATUS_SKIP, "no telemetry for this device%s%s", note[0] ? ": " : "", note);
        return NULL;
}

/* Run judge on the telemetry of every device that has some (the others get telemetry_of's
 * skip). */
static void each_telemetry(const struct check_info *self, const struct facts *f, struct report *rep,
                           void (*judge)(const struct facts *f, const struct burn_telemetry *t, struct result *r)) {
        if (!burn_ran(self, f, rep))
                return;
        for (size_t i = 0; i < f->burn->n_devs; i++) {
                struct result *r;
                const struct burn_telemetry *t = telemetry_of(self, f, &f->burn->devs[i], rep, &r);
                if (t)
                        judge(f, t, r);
        }
}

/* The median of a sample field over the loaded samples of the modes in `modes`, skipping
 * the first `skip_s` seconds of each device's load (ramp-up); NAN when none. */
static double loaded_median(const struct burn_telemetry *t, unsigned modes, size_t field_off, double skip_s) {
        double v[t->n_samples ? t->n_samples : 1];
        size_t n = 0;
        double first_t = -1;
        for (size_t i = 0; i < t->n_samples; i++) {
                const struct burn_sample *x = &t->samples[i];
                if (!x->loaded || !(modes & BURN_MODE_BIT(x->mode)))
                        continue;
                if (first_t < 0)
                        first_t = x->t_s;
                float val;
                memcpy(&val, (const char *)x + field_off, sizeof(val));
                if (x->t_s - first_t < skip_s || isnan(val))
                        continue;
                v[n++] = val;
        }
        if (!n)
                return NAN;
        qsort(v, n, sizeof(v[0]), cmp_double);
        return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static double loaded_max(const struct burn_telemetry *t, size_t field_off) {
        double m = NAN;
        for (size_t i = 0; i < t->n_samples; i++) {
                float val;
                memcpy(&val, (const char *)&t->samples[i] + field_off, sizeof(val));
                if (t->samples[i].loaded && !isnan(val) && (isnan(m) || val > m))
                        m = val;
        }
        return m;
}

#define LOAD_MODES (BURN_MODE_BIT(BURN_MODE_GEMM) | BURN_MODE_BIT(BURN_MODE_POWER))

/* The samples at the start of a load that are left out while clocks and power settle:
 * `most` seconds, or a quarter of the mode's slice when that is shorter (short runs). */
static double ramp_s(const struct burn_facts *b, enum burn_mode m, double most) {
        double quarter = b->slices_ms[m] / 4000.0;
        return quarter < most ? quarter : most;
}

static const struct {
        uint64_t bit;
        const char *name;
} slowdowns[] = {
        {NV_CLOCKS_EVENT_HW_SLOWDOWN, "HW slowdown"},
        {NV_CLOCKS_EVENT_HW_THERMAL_SLOWDOWN, "HW thermal slowdown"},
        {NV_CLOCKS_EVENT_HW_POWER_BRAKE_SLOWDOWN, "HW power brake"},
        {NV_CLOCKS_EVENT_SW_THERMAL_SLOWDOWN, "SW thermal slowdown"},
};

/* The counters of reasons that cut the clocks (not the power cap), by what they grew over
 * the run: NVML counts the time each held, so an event shorter than the sample interval
 * shows here when no sample caught its bit. */
static const struct {
        int viol; /* enum nvml_violation */
        const char *name;
} slowdown_counters[] = {
        {NVML_VIOL_HW_THERMAL, "HW thermal slowdown"},
        {NVML_VIOL_HW_POWER_BRAKE, "HW power brake"},
        {NVML_VIOL_THERMAL, "SW thermal slowdown"},
};

static double counter_grew_s(const struct burn_telemetry *t, int v) {
        if (!t->have_violation[v] || t->violation_end_ns[v] < t->violation_start_ns[v])
                return 0;
        return (t->violation_end_ns[v] - t->violation_start_ns[v]) / 1e9;
}

static void judge_clock_events(const struct facts *f, const struct burn_telemetry *t, struct result *r) {
        (void)f; /* judged by NVML's own limits, not the policy's thresholds */
        char seen[160] = "";
        size_t used = 0;
        for (size_t k = 0; k < ARRAY_COUNT(slowdowns); k++)
                if ((t->reasons_loaded & slowdowns[k].bit) && used < sizeof(seen))
                        used += (size_t)snprintf(seen + used, sizeof(seen) - used, "%s%s", used ? ", " : "",
                                                 slowdowns[k].name);
        for (size_t k = 0; k < ARRAY_COUNT(slowdown_counters); k++) {
                double grew = counter_grew_s(t, slowdown_counters[k].viol);
                if (grew > 0 && !strstr(seen, slowdown_counters[k].name) && used < sizeof(seen))
                        used += (size_t)snprintf(seen + used, sizeof(seen) - used, "%s%s (%.3f s by NVML's counter)",
                                                 used ? ", " : "", slowdown_counters[k].name, grew);
        }
        if (t->have_violation[NVML_VIOL_POWER])
                result_evidence(r, "power_cap_s", "%.3f s at the power cap during the run",
                                counter_grew_s(t, NVML_VIOL_POWER));
        result_observed(r, "clock event reasons under load: 0x%016llx", (unsigned long long)t->reasons_loaded);
        result_expected(r, "no HW slowdown, thermal slowdown or power brake under load (the SW power cap is "
                           "normal)");
        if (seen[0]) {
                result_status(r, STATUS_FAIL, "clocks were cut under load: %s", seen);
                result_remedy(r, "HW slowdown and power brake come from the board or the chassis (PSU, power "
                                 "cabling, the BMC's power policy); thermal slowdown from cooling (airflow, "
                                 "fans, heatsink contact, inlet temperature): fix it and rerun the burn");
        } else {
                result_status(r, STATUS_PASS, "no slowdown under load%s",
                              t->reasons_loaded & NV_CLOCKS_EVENT_SW_POWER_CAP ? " (at its power cap, as expected)"
                                                                              : "");
        }
}

static void run_clock_events(const struct check_info *self, const struct facts *f, struct report *rep) {
        each_telemetry(self, f, rep, judge_clock_events);
}

CHECK_INFO(burn_clock_events, "burn", "burn.clock_events", LEVEL_FULL, NEED_XID | NEED_NVML | NEED_BURN,
           "No HW slowdown, thermal slowdown or power brake cut the clocks under load", run_clock_events);

static void judge_temperature(const struct facts *f, const struct burn_telemetry *t, struct result *r) {
        unsigned margin = check_thresholds(f)->temp_margin_c;
        double gpu = loaded_max(t, offsetof(struct burn_sample, temp_c));
        double mem = loaded_max(t, offsetof(struct burn_sample, mem_temp_c));
        if (isnan(gpu)) {
                result_status(r, STATUS_SKIP, "NVML gave no temperature under load");
                return;
        }
        result_observed(r, "hottest under load: GPU %.0f C", gpu);
        if (!isnan(mem))
                result_evidence(r, "memory", "%.0f C (limit %.0f C)", mem, t->temp_mem_max_c);
        if (t->temp_slowdown_c <= 0) {
                result_status(r, STATUS_PASS, "hottest %.0f C under load (NVML gives no slowdown temperature)", gpu);
                return;
        }
        result_expected(r, "at least %u C below the slowdown temperature (%.0f C)", margin, t->temp_slowdown_c);
        bool mem_hot = !isnan(mem) && t->temp_mem_max_c > 0 && mem + margin >= t->temp_mem_max_c;
        if (gpu >= t->temp_slowdown_c) {
                result_status(r, STATUS_FAIL, "reached its slowdown temperature under load (%.0f C of %.0f C)", gpu,
                              t->temp_slowdown_c);
        } else if (gpu + margin >= t->temp_slowdown_c || mem_hot) {
                result_status(r, STATUS_WARN, "within %u C of slowdown under load (%s %.0f C)", margin,
                              mem_hot ? "memory" : "GPU", mem_hot ? mem : gpu);
        } else {
                result_status(r, STATUS_PASS, "hottest %.0f C under load, %.0f C below slowdown", gpu,
                              t->temp_slowdown_c - gpu);
                return;
        }
        result_remedy(r, "improve the GPU's cooling: airflow and fan policy, blanking panels, inlet "
                         "temperature, heatsink contact; compare with its neighbours in the chassis");
}

static void run_temperature(const struct check_info *self, const struct facts *f, struct report *rep) {
        each_telemetry(self, f, rep, judge_temperature);
}

CHECK_INFO(burn_temperature, "burn", "burn.temperature", LEVEL_FULL, NEED_XID | NEED_NVML | NEED_BURN,
           "GPU and memory temperatures under load stay clear of the slowdown temperature", run_temperature);

static void judge_sm_clock(const struct facts *f, const struct burn_telemetry *t, struct result *r) {
        double fraction = check_thresholds(f)->burn_sm_clock_fraction;
        double sm = loaded_median(t, LOAD_MODES, offsetof(struct burn_sample, sm_mhz),
                                  ramp_s(f->burn, BURN_MODE_GEMM, 2.0));
        if (isnan(sm) || t->sm_max_mhz <= 0) {
                result_status(r, STATUS_SKIP, "no SM clock under a GEMM load (or no maximum) from NVML");
                return;
        }
        result_observed(r, "median SM clock under load %.0f MHz (%.0f%% of its %.0f MHz maximum)", sm,
                        sm / t->sm_max_mhz * 100, t->sm_max_mhz);
        result_expected(r, "at least %.0f%% of the maximum", fraction * 100);
        /* The floor as a number, for whoever draws the clock against it (report --html). */
        result_evidence(r, "clock_floor_mhz", "%.0f", fraction * t->sm_max_mhz);
        if (sm < fraction * t->sm_max_mhz) {
                result_status(r, STATUS_FAIL, "SM clock under load only %.0f%% of its maximum",
                              sm / t->sm_max_mhz * 100);
                result_remedy(r, "see burn.clock_events for why (power brake, thermal slowdown); check "
                                 "application clocks and clock locks (nvidia-smi -q -d CLOCK) and the power "
                                 "limit (gpu.power_limit)");
        } else {
                result_status(r, STATUS_PASS, "%.0f MHz under load (%.0f%% of maximum)", sm,
                              sm / t->sm_max_mhz * 100);
        }
}

static void run_sm_clock(const struct check_info *self, const struct facts *f, struct report *rep) {
        each_telemetry(self, f, rep, judge_sm_clock);
}

CHECK_INFO(burn_sm_clock, "burn", "burn.sm_clock", LEVEL_FULL, NEED_XID | NEED_NVML | NEED_BURN,
           "The SM clock under a GEMM load stays above a fraction of its maximum", run_sm_clock);

static void run_power(const struct check_info *self, const struct facts *f, struct report *rep) {
        if (!burn_ran(self, f, rep))
                return;
        double fraction = check_thresholds(f)->burn_power_fraction;
        for (size_t i = 0; i < f->burn->n_devs; i++) {
                const struct burn_device *d = &f->burn->devs[i];
                if (!f->burn->slices_ms[BURN_MODE_POWER]) {
                        result_status(device_result(self, d, rep), STATUS_SKIP, "power mode not selected");
                        continue;
                }
                struct result *r;
                const struct burn_telemetry *t = telemetry_of(self, f, d, rep, &r);
                if (!t)
                        continue;
                /* The first seconds ramp up: clocks and power settle after the load starts. */
                double w = loaded_median(t, BURN_MODE_BIT(BURN_MODE_POWER), offsetof(struct burn_sample, power_w),
                                         ramp_s(f->burn, BURN_MODE_POWER, 3.0));
                double limit = loaded_median(t, BURN_MODE_BIT(BURN_MODE_POWER),
                                             offsetof(struct burn_sample, power_limit_w), 0);
                if (isnan(w) || isnan(limit) || limit <= 0) {
                        result_status(r, STATUS_SKIP, "NVML gave no power draw or enforced limit in the power mode");
                        continue;
                }
                result_observed(r, "median draw %.0f W of an enforced limit of %.0f W (%.0f%%)", w, limit, w / limit * 100);
                result_expected(r, "at least %.0f%% of the enforced limit", fraction * 100);
                if (w < fraction * limit) {
                        result_status(r, STATUS_FAIL, "reached only %.0f%% of its power limit under the power load",
                                      w / limit * 100);
                        result_remedy(r, "see burn.clock_events and burn.sm_clock: clocks cut by slowdown keep power "
                                         "low; otherwise check the power cabling and the board's power delivery "
                                         "(vendor diagnostics)");
                } else {
                        result_status(r, STATUS_PASS, "held %.0f W, %.0f%% of its %.0f W limit", w, w / limit * 100, limit);
                }
        }
}

CHECK_INFO(burn_power, "burn", "burn.power", LEVEL_FULL, NEED_NVML | NEED_BURN,
           "Under the power mode each GPU draws close to its enforced power limit", run_power);

static void judge_ecc(const struct facts *f, const struct burn_telemetry *t, struct result *r) {
        (void)f; /* judged by NVML's own limits, not the policy's thresholds */
        unsigned long long unc = t->have_ecc ? t->ecc_uncorrected_end - t->ecc_uncorrected_start : 0;
        unsigned long long cor = t->have_ecc ? t->ecc_corrected_end - t->ecc_corrected_start : 0;
        bool new_remap = t->remap_pending_end && !t->remap_pending_start;
        /* Blackwell's HBM channel and TPC repairs wait for a reset as a remap does. */
        bool new_repair = t->repair_pending_end && !t->repair_pending_start;
        result_observed(r, "during the run: %llu uncorrectable and %llu corrected ECC errors (counters), %u "
                           "double-bit events%s%s%s",
                        unc, cor, t->dbe_events, new_remap ? ", a row remap became pending" : "",
                        new_repair ? ", a channel/TPC repair became pending" : "",
                        t->retired_pending_end ? ", a page retirement is pending" : "");
        result_expected(r, "no new uncorrectable error, pending row remap, memory repair or page retirement");
        if (unc || t->dbe_events || new_remap || new_repair || t->retired_pending_end) {
                result_status(r, STATUS_FAIL, "the GPU's memory failed under load (%s)",
                              unc || t->dbe_events ? "uncorrectable ECC errors"
                              : new_repair         ? "a channel/TPC repair pending"
                                                   : "a remap or retirement pending");
                result_remedy(r, "drain the node and reset the GPU so that pending remaps and repairs take "
                                 "effect (gpu.memory_health), then rerun the burn; a remap failure or errors "
                                 "that return mean RMA");
        } else if (!t->have_ecc) {
                result_status(r, STATUS_SKIP, "NVML gave no ECC counters (ECC off or unsupported)");
        } else {
                result_status(r, STATUS_PASS, "no uncorrectable ECC error under load (%llu corrected)", cor);
        }
}

static void run_ecc(const struct check_info *self, const struct facts *f, struct report *rep) {
        each_telemetry(self, f, rep, judge_ecc);
}

CHECK_INFO(burn_ecc, "burn", "burn.ecc", LEVEL_FULL, NEED_XID | NEED_NVML | NEED_BURN,
           "No uncorrectable ECC error, pending row remap or page retirement appears under load", run_ecc);

static void judge_xid(const struct facts *f, const struct burn_telemetry *t, struct result *r) {
        (void)f; /* judged by NVML's own limits, not the policy's thresholds */
        if (!t->xids) {
                result_status(r, STATUS_PASS, "no Xid event during the run");
                return;
        }
        char codes[128] = "";
        size_t used = 0;
        for (unsigned k = 0; k < t->n_xid_codes && used < sizeof(codes); k++)
                used += (size_t)snprintf(codes + used, sizeof(codes) - used, "%s%llu", k ? ", " : "",
                                         t->xid_codes[k]);
        result_observed(r, "%u Xid event%s: %s", t->xids, t->xids == 1 ? "" : "s", codes);
        result_expected(r, "no Xid event under load");
        result_status(r, STATUS_FAIL, "the driver reported Xid %s during the run", codes);
        result_remedy(r, "look each Xid up (gpu.xid gives the meaning and action of each, docs/checks/gpu.md); "
                         "drain the node, reset or reboot, and rerun the burn");
}

static void run_xid(const struct check_info *self, const struct facts *f, struct report *rep) {
        each_telemetry(self, f, rep, judge_xid);
}

CHECK_INFO(burn_xid, "burn", "burn.xid", LEVEL_FULL, NEED_XID | NEED_NVML | NEED_BURN, "The driver reports no Xid event during the run", run_xid);
