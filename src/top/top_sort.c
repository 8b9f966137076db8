/* The process rows' orders (top_model.h, enum top_sort): each key, then the GPU and the
 * PID, so that equal keys never swap places between frames. */
#include "top/top_model.h"

#include <stdbool.h>
#include <stdlib.h>

static int by_gpu_pid(const struct top_proc_row *a, const struct top_proc_row *b) {
        if (a->gpu != b->gpu)
                return a->gpu < b->gpu ? -1 : 1;
        if (a->pid != b->pid)
                return a->pid < b->pid ? -1 : 1;
        return (int)a->graphics - (int)b->graphics;
}

static int by_memory(const void *x, const void *y) {
        const struct top_proc_row *a = x, *b = y;
        /* unknown usage last */
        if (a->have_mem != b->have_mem)
                return a->have_mem ? -1 : 1;
        if (a->used_bytes != b->used_bytes)
                return a->used_bytes > b->used_bytes ? -1 : 1;
        return by_gpu_pid(a, b);
}

static int by_util(const void *x, const void *y) {
        const struct top_proc_row *a = x, *b = y;
        if (a->sm_pct != b->sm_pct)
                return a->sm_pct > b->sm_pct ? -1 : 1;
        if (a->gpu_util != b->gpu_util)
                return a->gpu_util > b->gpu_util ? -1 : 1;
        return by_gpu_pid(a, b);
}

static int by_pid(const void *x, const void *y) {
        const struct top_proc_row *a = x, *b = y;
        if (a->pid != b->pid)
                return a->pid < b->pid ? -1 : 1;
        return by_gpu_pid(a, b);
}

/* Larger first, an unknown value (have false) after every known one, ties as by_gpu_pid. */
static int larger_first(bool have_a, double a, bool have_b, double b, const struct top_proc_row *ra,
                        const struct top_proc_row *rb) {
        if (have_a != have_b)
                return have_a ? -1 : 1;
        if (have_a && a != b)
                return a > b ? -1 : 1;
        return by_gpu_pid(ra, rb);
}

static int by_cpu(const void *x, const void *y) {
        const struct top_proc_row *a = x, *b = y;
        return larger_first(a->cpu_pct >= 0, a->cpu_pct, b->cpu_pct >= 0, b->cpu_pct, a, b);
}

static int by_rss(const void *x, const void *y) {
        const struct top_proc_row *a = x, *b = y;
        return larger_first(a->info.have_rss, (double)a->info.rss_kib, b->info.have_rss, (double)b->info.rss_kib, a, b);
}

static int by_time(const void *x, const void *y) {
        const struct top_proc_row *a = x, *b = y;
        return larger_first(a->info.elapsed_s >= 0, a->info.elapsed_s, b->info.elapsed_s >= 0, b->info.elapsed_s, a, b);
}

void top_model_sort(struct top_model *m, enum top_sort key) {
        static int (*const cmp[TOP_SORT_COUNT])(const void *, const void *) = {by_memory, by_util, by_pid,
                                                                              by_cpu,    by_rss,  by_time};
        if (m->n_procs > 1 && key < TOP_SORT_COUNT)
                qsort(m->procs, m->n_procs, sizeof(*m->procs), cmp[key]);
}

const char *top_sort_name(enum top_sort key) {
        static const char *const names[TOP_SORT_COUNT] = {"memory", "utilization", "pid", "cpu", "rss", "time"};
        return key < TOP_SORT_COUNT ? names[key] : "?";
}
