#include "report/burn_json.h"
#include "burn/burn.h"
#include "core/array.h"
#include "core/json_real.h"
#include "core/json_text.h"

#include <inttypes.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>

static json_t *fault_json(const struct burn_fault *x) {
        if (x->mode == BURN_MODE_MEMTEST) {
                char exp[24], got[24], bits[24];
                snprintf(exp, sizeof(exp), "0x%" PRIx64, x->mem_expected);
                snprintf(got, sizeof(got), "0x%" PRIx64, x->mem_got);
                snprintf(bits, sizeof(bits), "0x%" PRIx64, x->mem_expected ^ x->mem_got);
                return json_pack("{s:s, s:I, s:s, s:s, s:s, s:o}", "mode", "memtest", "offset", (json_int_t)x->where_a,
                                 "expected", exp, "got", got, "bits", bits, "pattern", json_text(x->what));
        }
        /* NaN and infinities, common in a faulty GPU's results, have no JSON form: null, rather
         * than json_pack failing and the fault vanishing from the list its total counts. */
        return json_pack("{s:s, s:I, s:I, s:o, s:o, s:o}", "mode", burn_mode_name(x->mode), "row",
                         (json_int_t)x->where_a, "col", (json_int_t)x->where_b, "expected",
                         json_real_or_null(x->expected), "got", json_real_or_null(x->got), "against",
                         json_text(x->what));
}

static json_t *telemetry_json(const struct burn_telemetry *t) {
        if (!t->nvml)
                return json_null();
        char reasons[24];
        snprintf(reasons, sizeof(reasons), "0x%016" PRIx64, t->reasons_loaded);
        json_t *xids = json_array();
        for (unsigned i = 0; i < t->n_xid_codes; i++)
                json_array_append_new(xids, json_integer((json_int_t)t->xid_codes[i]));
        json_t *o = json_pack("{s:o, s:o, s:o, s:s, s:I, s:o, s:I, s:I, s:b, s:b, s:I, s:I}", "sm_max_mhz",
                              json_real_or_null(t->sm_max_mhz > 0 ? t->sm_max_mhz : NAN), "temperature_slowdown_c",
                              json_real_or_null(t->temp_slowdown_c > 0 ? t->temp_slowdown_c : NAN), "memory_temperature_max_c",
                              json_real_or_null(t->temp_mem_max_c > 0 ? t->temp_mem_max_c : NAN), "clock_event_reasons_loaded",
                              reasons, "xids", (json_int_t)t->xids, "xid_codes", xids, "ecc_uncorrected_new",
                              (json_int_t)(t->have_ecc ? t->ecc_uncorrected_end - t->ecc_uncorrected_start : 0),
                              "ecc_corrected_new",
                              (json_int_t)(t->have_ecc ? t->ecc_corrected_end - t->ecc_corrected_start : 0),
                              "remap_pending", t->remap_pending_end, "retirement_pending", t->retired_pending_end,
                              "double_bit_events", (json_int_t)t->dbe_events, "single_bit_events",
                              (json_int_t)t->sbe_events);
        json_t *series = json_array();
        for (size_t i = 0; i < t->n_samples; i++) {
                const struct burn_sample *x = &t->samples[i];
                char r[24];
                snprintf(r, sizeof(r), "0x%" PRIx64, x->reasons);
                json_array_append_new(
                        series, json_pack("{s:f, s:s, s:b, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o}", "t_s", x->t_s, "mode",
                                          burn_mode_name(x->mode), "loaded", x->loaded, "temperature_c",
                                          json_real_or_null(x->temp_c), "memory_temperature_c", json_real_or_null(x->mem_temp_c),
                                          "power_w", json_real_or_null(x->power_w), "power_limit_w", json_real_or_null(x->power_limit_w),
                                          "sm_clock_mhz", json_real_or_null(x->sm_mhz), "memory_clock_mhz",
                                          json_real_or_null(x->mem_mhz), "utilization_pct", json_real_or_null(x->util_pct),
                                          "clock_event_reasons", x->have_reasons ? json_string(r) : json_null()));
        }
        json_object_set_new(o, "samples", series);
        /* seconds each clock-event counter grew over the run, by nvidia-smi's names */
        static const char *const names[] = {"sw_power_cap", "sw_thermal_slowdown", "sync_boost", "board_limit",
                                            "low_utilization", "reliability", "below_base_clocks", "hw_thermal_slowdown",
                                            "hw_power_brake_slowdown"};
        json_t *viol = json_object();
        for (size_t v = 0; v < ARRAY_COUNT(names); v++)
                if (t->have_violation[v])
                        json_object_set_new(viol, names[v],
                                            json_real(t->violation_end_ns[v] >= t->violation_start_ns[v]
                                                              ? (t->violation_end_ns[v] - t->violation_start_ns[v]) / 1e9
                                                              : 0));
        json_object_set_new(o, "clock_event_seconds", viol);
        return o;
}

static json_t *device_json(const struct burn_device *d) {
        json_t *o = json_object();
        json_object_set_new(o, "index", json_integer(d->index));
        json_object_set_new(o, "name", json_text(d->name));
        json_object_set_new(o, "pci_bus_id", d->bus[0] ? json_text(d->bus) : json_null());
        json_object_set_new(o, "cpu", json_boolean(d->is_cpu));
        json_object_set_new(o, "backend", json_text(d->backend));
        json_object_set_new(o, "end", json_string(burn_end_name(d->end)));
        json_object_set_new(o, "error", d->error[0] ? json_text(d->error) : json_null());
        json_object_set_new(o, "started_s", json_real(d->started_s));
        json_object_set_new(o, "ended_s", json_real(d->ended_s));
        json_object_set_new(
                o, "gemm",
                json_pack("{s:I, s:f, s:f, s:f, s:I, s:I, s:I, s:I, s:I}", "products", (json_int_t)d->products, "flops",
                          d->flops, "load_seconds", d->load_seconds, "device_seconds", d->device_seconds,
                          "verifications", (json_int_t)d->verifications, "elements_sampled",
                          (json_int_t)d->elements_sampled, "faulty_vs_host", (json_int_t)d->faulty_vs_host,
                          "elements_compared", (json_int_t)d->elements_compared, "faulty_vs_first",
                          (json_int_t)d->faulty_vs_first));
        json_t *loads = json_object();
        for (int m = 0; m < _BURN_MODE_COUNT; m++) {
                const struct burn_load *l = &d->loads[m];
                if (!l->workload[0])
                        continue;
                char digest[17];
                snprintf(digest, sizeof(digest), "%016" PRIx64, l->digest);
                json_object_set_new(loads, burn_mode_name((enum burn_mode)m),
                                    json_pack("{s:o, s:o, s:o, s:b}", "workload", json_text(l->workload), "precision",
                                              l->precision[0] ? json_text(l->precision) : json_null(), "digest",
                                              l->have_digest ? json_string(digest) : json_null(), "digest_changed",
                                              l->digest_changed));
        }
        json_object_set_new(o, "loads", loads);
        json_object_set_new(o, "memtest",
                            json_pack("{s:I, s:I, s:I, s:I, s:f, s:o}", "bytes", (json_int_t)d->mem_bytes, "passes",
                                      (json_int_t)d->mem_passes, "words", (json_int_t)d->mem_words, "errors",
                                      (json_int_t)d->mem_errors, "seconds", d->mem_seconds, "seed",
                                      d->mem_seed[0] ? json_text(d->mem_seed) : json_null()));
        json_t *faults = json_array();
        for (unsigned i = 0; i < d->n_faults; i++)
                json_array_append_new(faults, fault_json(&d->faults[i]));
        json_object_set_new(o, "faults", faults);
        json_object_set_new(o, "faults_total", json_integer((json_int_t)d->faults_total));
        json_t *rates = json_array();
        for (size_t i = 0; i < d->n_rates; i++)
                json_array_append_new(rates, json_pack("{s:f, s:s, s:o}", "t_s", d->rates[i].t_s, "mode",
                                                       burn_mode_name(d->rates[i].mode), "tflops",
                                                       json_real_or_null(d->rates[i].tflops)));
        json_object_set_new(o, "throughput", rates);
        json_object_set_new(o, "telemetry", telemetry_json(&d->tele));
        return o;
}

void *burn_json(const struct burn_facts *b) {
        json_t *o = json_object();
        if (!o)
                return NULL;
        json_object_set_new(o, "ran", json_boolean(b->ran));
        json_object_set_new(o, "not_run", b->ran ? json_null() : json_text(b->not_run));
        json_object_set_new(o, "interrupted", json_boolean(b->interrupted));
        json_object_set_new(o, "backend", b->backend[0] ? json_text(b->backend) : json_null());
        json_object_set_new(o, "duration_s", json_real(b->duration_s));
        char seed[24];
        snprintf(seed, sizeof(seed), "%" PRIu64, b->opt.seed);
        json_object_set_new(o, "seed", json_string(seed));
        json_object_set_new(o, "precision", b->opt.precision ? json_text(b->opt.precision) : json_null());
        json_object_set_new(o, "verify_every", b->opt.verify_every ? json_integer(b->opt.verify_every) : json_null());
        json_t *modes = json_object();
        for (int m = 0; m < _BURN_MODE_COUNT; m++)
                if (b->slices_ms[m])
                        json_object_set_new(modes, burn_mode_name((enum burn_mode)m), json_real(b->slices_ms[m] / 1e3));
        json_object_set_new(o, "modes_s", modes);
        json_object_set_new(o, "note", b->census_note[0] ? json_text(b->census_note) : json_null());
        json_object_set_new(o, "telemetry_note", b->telemetry_note[0] ? json_text(b->telemetry_note) : json_null());
        json_object_set_new(o, "sample_interval_ms",
                            json_integer(b->opt.sample_ms ? b->opt.sample_ms : BURN_DEFAULT_SAMPLE_MS));
        json_t *devs = json_array();
        for (size_t i = 0; i < b->n_devs; i++)
                json_array_append_new(devs, device_json(&b->devs[i]));
        json_object_set_new(o, "devices", devs);
        return o;
}
