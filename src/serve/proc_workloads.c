/* Attributed GPU processes with a cache by PID and start time (proc_workloads.h). */
#include "serve/proc_workloads.h"

#include "core/fsroot.h"
#include "core/grow.h"
#include "sys/proc.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* /proc/PID/stat and status are a line and a few dozen lines. */
#define STAT_MAX 4096u
#define STATUS_MAX (64u << 10)

struct entry {
        unsigned long long starttime;
        unsigned long long round; /* the last round that listed it */
        struct attributed_proc p;
};

struct proc_workloads {
        struct fsroot *fs;
        bool nested;
        struct proc_users *users;
        unsigned long long round;
        size_t n, cap;
        struct entry *v;
};

int proc_workloads_new(struct fsroot *fs, struct proc_workloads **ret) {
        struct proc_workloads *c = calloc(1, sizeof(*c));
        if (!c)
                return -ENOMEM;
        c->fs = fs;
        c->nested = proc_self_nested(fs);
        if (proc_users_load(fs, &c->users) < 0) {
                free(c);
                return -ENOMEM;
        }
        *ret = c;
        return 0;
}

void proc_workloads_free(struct proc_workloads *c) {
        if (!c)
                return;
        proc_users_free(c->users);
        free(c->v);
        free(c);
}

bool proc_stat_starttime(const char *text, size_t len, unsigned long long *ret) {
        /* "PID (comm) S ppid ...": comm may hold ')' and spaces, so fields count from the
         * last ')'; starttime is field 22, the 20th after it. */
        const char *close = NULL;
        for (size_t i = 0; i < len; i++)
                if (text[i] == ')')
                        close = text + i;
        if (!close)
                return false;
        const char *p = close + 1, *end = text + len;
        for (int field = 3; field <= 22; field++) {
                while (p < end && *p == ' ')
                        p++;
                const char *start = p;
                while (p < end && *p != ' ' && *p != '\n')
                        p++;
                if (p == start)
                        return false;
                if (field == 22) {
                        unsigned long long v = 0;
                        for (const char *d = start; d < p; d++) {
                                if (*d < '0' || *d > '9' || v > (~0ULL - 9) / 10)
                                        return false;
                                v = v * 10 + (unsigned long long)(*d - '0');
                        }
                        *ret = v;
                        return true;
                }
        }
        return false;
}

/* The start time of pid now; false when the process is gone or its stat unreadable. */
static bool starttime_of(struct fsroot *fs, unsigned int pid, unsigned long long *ret) {
        char path[64], *text = NULL;
        size_t len = 0;
        snprintf(path, sizeof(path), "/proc/%u/stat", pid);
        bool ok = fsroot_read_alloc_max(fs, path, STAT_MAX, &text, &len) == 0 && proc_stat_starttime(text, len, ret);
        free(text);
        return ok;
}

/* Everything about pid that does not change while it lives. */
static void look_up(struct proc_workloads *c, unsigned int pid, struct attributed_proc *p) {
        char path[64], *text = NULL;
        size_t len = 0;
        struct proc_status st;
        snprintf(path, sizeof(path), "/proc/%u/status", pid);
        if (fsroot_read_alloc_max(c->fs, path, STATUS_MAX, &text, &len) < 0 || proc_status_parse(text, len, &st) < 0) {
                free(text);
                return;
        }
        free(text);
        p->found = true;
        snprintf(p->process, sizeof(p->process), "%s", st.name);
        const char *name = st.have_uid ? proc_users_name(c->users, st.uid) : NULL;
        if (name)
                snprintf(p->user, sizeof(p->user), "%s", name);
        else if (st.have_uid)
                snprintf(p->user, sizeof(p->user), "%u", st.uid);
        if (workload_read(c->fs, pid, &p->w) == 0)
                workload_kubernetes_names(c->fs, &p->w);
}

static struct entry *find(struct proc_workloads *c, unsigned int pid) {
        for (size_t i = 0; i < c->n; i++)
                if (c->v[i].p.pid == pid)
                        return &c->v[i];
        return NULL;
}

/* pid attributed into *out, from the cache or looked up. Returns 0 or -ENOMEM. */
static int attribute(struct proc_workloads *c, unsigned int pid, struct attributed_proc *out) {
        *out = (struct attributed_proc){.pid = pid};
        unsigned long long start;
        if (c->nested || !starttime_of(c->fs, pid, &start))
                return 0; /* gone (or not ours to look up): NVML's word only */
        struct entry *e = find(c, pid);
        if (e && e->starttime == start) {
                e->round = c->round;
                *out = e->p;
                return 0;
        }
        struct attributed_proc p = {.pid = pid};
        look_up(c, pid, &p);
        unsigned long long again;
        if (!starttime_of(c->fs, pid, &again) || again != start)
                return 0; /* it ended (and the PID may be another's) while it was read */
        if (!e) {
                if (array_grow((void **)&c->v, c->n, &c->cap, sizeof(*c->v), 64) < 0)
                        return -ENOMEM;
                e = &c->v[c->n++];
        }
        *e = (struct entry){.starttime = start, .round = c->round, .p = p};
        *out = p;
        return 0;
}

/* The processes not listed in this round leave the cache. */
static void evict(struct proc_workloads *c) {
        size_t k = 0;
        for (size_t i = 0; i < c->n; i++)
                if (c->v[i].round == c->round)
                        c->v[k++] = c->v[i];
        c->n = k;
}

static unsigned long long mem_key(unsigned long long used) { return used == ~0ULL ? 0 : used; }

static int by_memory(const void *a, const void *b) {
        const struct nvml_process *x = a, *y = b;
        unsigned long long mx = mem_key(x->used_bytes), my = mem_key(y->used_bytes);
        if (mx != my)
                return mx > my ? -1 : 1;
        return x->pid < y->pid ? -1 : x->pid > y->pid;
}

/* The GPU's compute and graphics lists as one, a PID once (a process with both contexts
 * is listed in both), most memory first. A calloc'd array of *ret_n, or NULL. */
static struct nvml_process *merged(const struct nvml_gpu *g, unsigned int *ret_n) {
        const struct nvml_procs *lists[2] = {&g->compute_procs, &g->graphics_procs};
        size_t total = 0;
        for (int k = 0; k < 2; k++)
                if (lists[k]->state == NV_OK)
                        total += lists[k]->count;
        struct nvml_process *all = calloc(total ? total : 1, sizeof(*all));
        if (!all)
                return NULL;
        unsigned int n = 0;
        for (int k = 0; k < 2; k++) {
                if (lists[k]->state != NV_OK || !lists[k]->v)
                        continue;
                for (unsigned int i = 0; i < lists[k]->count; i++) {
                        const struct nvml_process *p = &lists[k]->v[i];
                        bool seen = false;
                        for (unsigned int j = 0; j < n && !seen; j++)
                                seen = all[j].pid == p->pid;
                        if (!seen)
                                all[n++] = *p;
                }
        }
        qsort(all, n, sizeof(*all), by_memory);
        *ret_n = n;
        return all;
}

void gpu_procs_free(struct gpu_procs *procs, unsigned int n_gpus) {
        for (unsigned int i = 0; procs && i < n_gpus; i++)
                free(procs[i].v);
        free(procs);
}

int proc_workloads_round(struct proc_workloads *c, const struct nvml_facts *f, struct gpu_procs **ret) {
        struct gpu_procs *out = calloc(f->n_gpus ? f->n_gpus : 1, sizeof(*out));
        if (!out)
                return -ENOMEM;
        c->round++;
        for (unsigned int i = 0; i < f->n_gpus; i++) {
                const struct nvml_gpu *g = &f->gpus[i];
                struct gpu_procs *gp = &out[i];
                gp->known = g->compute_procs.state == NV_OK || g->graphics_procs.state == NV_OK;
                if (!gp->known)
                        continue;
                unsigned int n = 0;
                struct nvml_process *all = merged(g, &n);
                if (!all) {
                        gpu_procs_free(out, f->n_gpus);
                        return -ENOMEM;
                }
                gp->count = n;
                unsigned int shown = n < PROC_WORKLOADS_PER_GPU ? n : PROC_WORKLOADS_PER_GPU;
                gp->v = shown ? calloc(shown, sizeof(*gp->v)) : NULL;
                if (shown && !gp->v) {
                        free(all);
                        gpu_procs_free(out, f->n_gpus);
                        return -ENOMEM;
                }
                for (unsigned int k = 0; k < shown; k++) {
                        struct attributed_proc *p = &gp->v[gp->n++];
                        if (attribute(c, all[k].pid, p) < 0) {
                                free(all);
                                gpu_procs_free(out, f->n_gpus);
                                return -ENOMEM;
                        }
                        p->used_bytes = all[k].used_bytes;
                        p->sm_pct = nvml_proc_sm_share(g, all[k].pid);
                }
                free(all);
        }
        evict(c);
        *ret = out;
        return 0;
}
