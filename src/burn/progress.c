#include "burn/progress.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

struct burn_progress {
        bool tty;
        size_t lines_drawn; /* on a terminal: how many lines to move up before redrawing */
        double last_s;
        uint64_t total_ms;
};

struct burn_progress *burn_progress_start(const struct burn_facts *b) {
        struct burn_progress *p = calloc(1, sizeof(*p));
        if (!p)
                return NULL;
        p->tty = isatty(STDERR_FILENO);
        p->last_s = -1e9;
        for (int m = 0; m < _BURN_MODE_COUNT; m++)
                p->total_ms += b->slices_ms[m];
        return p;
}

/* One device's line, without a newline: the mode it runs, and its clock, which keeps moving
 * past the planned end while a device finishes its last launch (or until the hang deadline
 * takes it): a frozen "0s left" looked like gpuvet had hung. */
static void device_line(FILE *out, const struct burn_device *d, double t_s, uint64_t total_ms) {
        bool finished = d->ended_s > 0 || d->end != BURN_END_NOT_RUN || d->error[0];
        const char *doing = d->end == BURN_END_DONE ? "done"
                            : finished              ? "ended"
                            : d->in_mode            ? burn_mode_name(d->mode)
                                                    : "starting";
        double left = total_ms / 1e3 - t_s;
        fprintf(out, "device %d %-14.14s %-8s", d->index, d->bus[0] ? d->bus : d->name, doing);
        if (finished)
                fprintf(out, " at %4.0fs", d->ended_s);
        else if (left > 0)
                fprintf(out, " %4.0fs, %4.0fs left", t_s, left);
        else
                fprintf(out, " %4.0fs, waiting for GPU %d (%.0fs past the end)", t_s, d->index, -left);
        if (d->n_rates)
                fprintf(out, "  %8.3f TFLOPS", d->rates[d->n_rates - 1].tflops);
        if (!isnan(d->temp_c))
                fprintf(out, "  %3.0f C", d->temp_c);
        if (!isnan(d->power_w))
                fprintf(out, "  %4.0f W", d->power_w);
        fprintf(out, "  errors %llu", (unsigned long long)d->faults_total);
        if (d->end != BURN_END_NOT_RUN && d->end != BURN_END_DONE)
                fprintf(out, "  [%s]", burn_end_name(d->end));
}

void burn_progress_update(struct burn_progress *p, const struct burn_facts *b, double t_s) {
        double every = p->tty ? 1.0 : BURN_PROGRESS_PLAIN_S;
        if (t_s - p->last_s < every)
                return;
        p->last_s = t_s;
        if (p->tty && p->lines_drawn)
                fprintf(stderr, "\033[%zuA", p->lines_drawn);
        for (size_t i = 0; i < b->n_devs; i++) {
                device_line(stderr, &b->devs[i], t_s, p->total_ms);
                fputs(p->tty ? "\033[K\n" : "\n", stderr);
        }
        p->lines_drawn = b->n_devs;
        fflush(stderr);
}

void burn_progress_end(struct burn_progress *p, const struct burn_facts *b) {
        p->last_s = -1e9;
        burn_progress_update(p, b, b->duration_s);
        free(p);
}
