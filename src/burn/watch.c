#include "burn/watch.h"
#include "core/array.h"
#include "metrics/sampler.h"
#include "sys/nvml_events.h"
#include "sys/nvml_facts.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

_Static_assert(NVML_VIOL_COUNT == sizeof(((struct burn_telemetry *)0)->have_violation) /
                       sizeof(((struct burn_telemetry *)0)->have_violation[0]),
               "burn_telemetry keeps one counter per enum nvml_violation");

struct burn_watch {
        struct sampler *sampler;
        struct nvml_events *events;
        unsigned long long seq;
        bool ended_noted;
};

unsigned long long burn_watch_groups(void) {
        static const enum nvml_group groups[] = {
                NVML_GROUP_PCI,        NVML_GROUP_TEMP,          NVML_GROUP_TEMP_THRESHOLDS, NVML_GROUP_THERMAL_FIELDS,
                NVML_GROUP_POWER_DRAW, NVML_GROUP_POWER_ENFORCED_LIMIT, NVML_GROUP_CLOCKS,    NVML_GROUP_CLOCKS_MAX,
                NVML_GROUP_CLOCK_REASONS, NVML_GROUP_VIOLATIONS, NVML_GROUP_UTIL,           NVML_GROUP_ECC_COUNTS,
                NVML_GROUP_RETIRED_PAGES,
                NVML_GROUP_REMAP,      NVML_GROUP_REPAIR,
        };
        unsigned long long set = 0;
        for (size_t i = 0; i < ARRAY_COUNT(groups); i++)
                set |= nvml_group_bit(groups[i]);
        return set;
}

int burn_watch_start(struct nvml_lib *lib, const struct nvml_facts *nv, const struct nvml_deadlines *dl,
                     unsigned interval_ms, struct burn_facts *b, struct burn_watch **ret) {
        *ret = NULL;
        if (!lib || !nv || nv->init_state != NVML_INIT_OK || nv->abandoned) {
                snprintf(b->telemetry_note, sizeof(b->telemetry_note), "no telemetry: NVML was not read");
                return -ENODEV;
        }
        struct burn_watch *w = calloc(1, sizeof(*w));
        if (!w) {
                snprintf(b->telemetry_note, sizeof(b->telemetry_note), "no telemetry: out of memory");
                return -ENOMEM;
        }
        struct sampler_options so = {.lib = lib, .groups = burn_watch_groups(), .interval_ms = interval_ms};
        if (dl)
                so.dl = *dl;
        so.dl.stop_requested = NULL; /* the sampler's own */
        so.dl.stop_ctx = NULL;
        int r = sampler_start(&so, &w->sampler);
        if (r < 0) {
                snprintf(b->telemetry_note, sizeof(b->telemetry_note), "no telemetry: the sampler did not start: %s",
                         strerror(-r));
                free(w);
                return r;
        }
        /* Events are a bonus: without them Xids still show in the kernel log (gpu.xid). */
        if (nvml_events_start(lib, nv, dl, 0, &w->events) < 0)
                w->events = NULL;
        *ret = w;
        return 0;
}

int burn_watch_fd(const struct burn_watch *w) { return w && w->sampler ? sampler_fd(w->sampler) : -1; }

static struct burn_device *device_at(struct burn_facts *b, const char *bus) {
        for (size_t i = 0; bus && *bus && i < b->n_devs; i++)
                if (b->devs[i].bus[0] && strcasecmp(b->devs[i].bus, bus) == 0)
                        return &b->devs[i];
        return NULL;
}

static float u32_or_nan(const struct nv_u32 *v, double scale) { return nv_ok(*v) ? (float)(v->v * scale) : NAN; }

static void file_sample(struct burn_device *d, const struct nvml_gpu *g, double t_s) {
        struct burn_telemetry *t = &d->tele;
        t->nvml = true;
        struct burn_sample s = {
                .t_s = t_s,
                .mode = d->mode,
                .loaded = d->in_mode && d->end == BURN_END_NOT_RUN,
                .temp_c = u32_or_nan(&g->temp_c, 1),
                .mem_temp_c = u32_or_nan(&g->temp_memory_c, 1),
                .power_w = u32_or_nan(&g->power_mw, 1e-3),
                .power_limit_w = u32_or_nan(&g->power_enforced_limit_mw, 1e-3),
                .sm_mhz = u32_or_nan(&g->clock_mhz[NVML_CLK_SM], 1),
                .mem_mhz = u32_or_nan(&g->clock_mhz[NVML_CLK_MEM], 1),
                .util_pct = u32_or_nan(&g->util_gpu_pct, 1),
                .have_reasons = nv_ok(g->clocks_event_reasons),
                .reasons = nv_ok(g->clocks_event_reasons) ? g->clocks_event_reasons.v : 0,
        };
        if (s.loaded && s.have_reasons)
                t->reasons_loaded |= s.reasons;
        if (nv_ok(g->clock_max_mhz[NVML_CLK_SM]))
                t->sm_max_mhz = (float)g->clock_max_mhz[NVML_CLK_SM].v;
        if (nv_ok(g->temp_slowdown_c))
                t->temp_slowdown_c = (float)g->temp_slowdown_c.v;
        if (nv_ok(g->temp_mem_max_c))
                t->temp_mem_max_c = (float)g->temp_mem_max_c.v;
        if (nv_ok(g->ecc_volatile_uncorrected) && nv_ok(g->ecc_volatile_corrected)) {
                if (!t->have_ecc) {
                        t->have_ecc = true;
                        t->ecc_uncorrected_start = g->ecc_volatile_uncorrected.v;
                        t->ecc_corrected_start = g->ecc_volatile_corrected.v;
                }
                t->ecc_uncorrected_end = g->ecc_volatile_uncorrected.v;
                t->ecc_corrected_end = g->ecc_volatile_corrected.v;
        }
        for (int v = 0; v < NVML_VIOL_COUNT; v++) {
                if (!nv_ok(g->violation_ns[v]))
                        continue;
                if (!t->have_violation[v])
                        t->violation_start_ns[v] = g->violation_ns[v].v;
                t->have_violation[v] = true;
                t->violation_end_ns[v] = g->violation_ns[v].v;
        }
        if (nv_ok(g->remap_pending)) {
                if (!t->n_samples)
                        t->remap_pending_start = g->remap_pending.v != 0;
                t->remap_pending_end = g->remap_pending.v != 0;
        }
        if (nv_ok(g->repair_channel_pending) && nv_ok(g->repair_tpc_pending)) {
                bool pending = g->repair_channel_pending.v || g->repair_tpc_pending.v;
                if (!t->n_samples)
                        t->repair_pending_start = pending;
                t->repair_pending_end = pending;
        }
        if (nv_ok(g->retired_pages_pending))
                t->retired_pending_end = g->retired_pages_pending.v == NV_ENABLED;
        d->temp_c = s.temp_c;
        d->power_w = s.power_w;
        if (t->n_samples == t->cap_samples) {
                size_t cap = t->cap_samples ? t->cap_samples * 2 : 128;
                struct burn_sample *grown = realloc(t->samples, cap * sizeof(*grown));
                if (!grown)
                        return; /* the series loses a point; the extremes above are kept */
                t->samples = grown;
                t->cap_samples = cap;
        }
        t->samples[t->n_samples++] = s;
}

static void on_event(const struct nvml_event *ev, void *userdata) {
        struct burn_facts *b = userdata;
        struct burn_device *d = device_at(b, ev->addr);
        if (!d)
                return;
        struct burn_telemetry *t = &d->tele;
        switch (ev->kind) {
        case NVML_EVENT_XID:
                t->xids++;
                if (t->n_xid_codes < ARRAY_COUNT(t->xid_codes))
                        t->xid_codes[t->n_xid_codes++] = ev->data;
                break;
        case NVML_EVENT_ECC_DBE: t->dbe_events++; break;
        case NVML_EVENT_ECC_SBE: t->sbe_events++; break;
        default: break; /* notices: what NVML cannot deliver is not a fault of the GPU */
        }
}

void burn_watch_pump(struct burn_watch *w, struct burn_facts *b, double t_s) {
        if (!w)
                return;
        struct sample *x;
        while ((x = sampler_next(w->sampler, w->seq, 0))) {
                w->seq = x->seq;
                for (unsigned i = 0; x->facts.gpus && i < x->facts.n_gpus; i++) {
                        const struct nvml_gpu *g = &x->facts.gpus[i];
                        struct burn_device *d = nv_ok(g->pci_bus_id) ? device_at(b, g->pci_bus_id.v) : NULL;
                        if (d)
                                file_sample(d, g, t_s);
                }
                sample_put(w->sampler, x);
        }
        struct sampler_status st;
        if (!w->ended_noted && sampler_ended(w->sampler, &st)) {
                w->ended_noted = true;
                snprintf(b->telemetry_note, sizeof(b->telemetry_note), "telemetry stopped %.0f s into the run: %s", t_s,
                         st.end == SAMPLER_CALL_HUNG ? "an NVML call never returned" : "the sampler ended");
        }
        if (w->events && nvml_events_poll(w->events, 0, on_event, b) == -ETIMEDOUT && !b->telemetry_note[0])
                snprintf(b->telemetry_note, sizeof(b->telemetry_note), "NVML events stopped: a call never returned");
}

void burn_watch_stop(struct burn_watch *w, struct burn_facts *b) {
        if (!w)
                return;
        bool abandoned = nvml_events_stop(w->events);
        abandoned = sampler_stop(w->sampler) || abandoned;
        b->nvml_abandoned = b->nvml_abandoned || abandoned;
        free(w);
}
