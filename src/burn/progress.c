#include "burn/progress.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "core/progress.h"

struct burn_progress {
        struct progress out;
        uint64_t total_ms;
};

struct burn_progress *burn_progress_start(const struct burn_facts *b) {
        struct burn_progress *p = calloc(1, sizeof(*p));
        if (!p)
                return NULL;
        progress_init(&p->out, true);
        for (int m = 0; m < _BURN_MODE_COUNT; m++)
                p->total_ms += b->slices_ms[m];
        return p;
}

/* One device's line: the mode it runs, and its clock, which keeps moving past the planned end
 * while a device finishes its last launch (or until the hang deadline takes it): a frozen
 * "0s left" looked like gpuvet had hung. */
static void device_line(struct progress *out, const struct burn_device *d, double t_s, uint64_t total_ms) {
        bool finished = d->ended_s > 0 || d->end != BURN_END_NOT_RUN || d->error[0];
        const char *doing = d->end == BURN_END_DONE ? "done"
                            : finished              ? "ended"
                            : d->in_mode            ? burn_mode_name(d->mode)
                                                    : "starting";
        double left = total_ms / 1e3 - t_s;
        char line[256];
        size_t len = 0;
        int n;
        if (finished)
                n = snprintf(line, sizeof(line), "device %d %-14.14s %-8s at %4.0fs", d->index,
                             d->bus[0] ? d->bus : d->name, doing, d->ended_s);
        else if (left > 0)
                n = snprintf(line, sizeof(line), "device %d %-14.14s %-8s %4.0fs, %4.0fs left", d->index,
                             d->bus[0] ? d->bus : d->name, doing, t_s, left);
        else
                n = snprintf(line, sizeof(line), "device %d %-14.14s %-8s %4.0fs, waiting for GPU %d (%.0fs past the end)",
                             d->index, d->bus[0] ? d->bus : d->name, doing, t_s, d->index, -left);
        if (n > 0 && (size_t)n < sizeof(line))
                len = (size_t)n;
        if (d->n_rates)
                len += (size_t)snprintf(line + len, sizeof(line) - len, "  %8.3f TFLOPS", d->rates[d->n_rates - 1].tflops);
        if (!isnan(d->temp_c) && len < sizeof(line))
                len += (size_t)snprintf(line + len, sizeof(line) - len, "  %3.0f C", d->temp_c);
        if (!isnan(d->power_w) && len < sizeof(line))
                len += (size_t)snprintf(line + len, sizeof(line) - len, "  %4.0f W", d->power_w);
        if (len < sizeof(line))
                len += (size_t)snprintf(line + len, sizeof(line) - len, "  errors %llu",
                                        (unsigned long long)d->faults_total);
        if (d->end != BURN_END_NOT_RUN && d->end != BURN_END_DONE && len < sizeof(line))
                snprintf(line + len, sizeof(line) - len, "  [%s]", burn_end_name(d->end));
        progress_line(out, "%s", line);
}

void burn_progress_update(struct burn_progress *p, const struct burn_facts *b, double t_s) {
        if (!progress_begin(&p->out, t_s))
                return;
        for (size_t i = 0; i < b->n_devs; i++)
                device_line(&p->out, &b->devs[i], t_s, p->total_ms);
        progress_end(&p->out);
}

void burn_progress_end(struct burn_progress *p, const struct burn_facts *b) {
        progress_now(&p->out);
        burn_progress_update(p, b, b->duration_s);
        free(p);
}
