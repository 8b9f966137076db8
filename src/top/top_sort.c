/* The process rows' orders (top_model.h, enum top_sort): each key, then the GPU and the
 * PID, so that equal keys never swap places between frames. */
#include "top/top_model.h"

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

void top_model_sort(struct top_model *m, enum top_sort key) {
        static int (*const cmp[TOP_SORT_COUNT])(const void *, const void *) = {by_memory, by_util, by_pid};
        if (m->n_procs > 1 && key < TOP_SORT_COUNT)
                qsort(m->procs, m->n_procs, sizeof(*m->procs), cmp[key]);
}

const char *top_sort_name(enum top_sort key) {
        static const char *const names[TOP_SORT_COUNT] = {"memory", "utilization", "pid"};
        return key < TOP_SORT_COUNT ? names[key] : "?";
}
