/* From samples to what top shows (top_model.h). */
#include "top/top_model.h"
#include "core/array.h"
#include "core/clock.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static struct top_reading u32r(const struct nv_u32 *r, double scale) {
        return (struct top_reading){.have = nv_ok(*r), .v = nv_ok(*r) ? r->v * scale : 0};
}

static struct top_reading u64r(const struct nv_u64 *r) {
        return (struct top_reading){.have = nv_ok(*r), .v = nv_ok(*r) ? (double)r->v : 0};
}

static bool is_lost(unsigned char state, int rc) { return state == NV_ERROR && rc == NV_RC_GPU_IS_LOST; }

/* Lost when the handle or any reading shown says so (NVML may hand out a handle and then
 * answer GPU_IS_LOST to every call). */
static bool gpu_lost(const struct nvml_gpu *g, const char **fn) {
        if (is_lost(g->handle.state, g->handle.rc)) {
                *fn = g->handle.fn;
                return true;
        }
        if (is_lost(g->name.state, g->name.rc)) {
                *fn = g->name.fn;
                return true;
        }
        if (is_lost(g->mem_used_bytes.state, g->mem_used_bytes.rc)) {
                *fn = g->mem_used_bytes.fn;
                return true;
        }
        /* in the order they are read, so that the first call that said so is named */
        const struct nv_u32 *u[] = {&g->temp_c, &g->power_mw, &g->clock_mhz[NVML_CLK_SM], &g->util_gpu_pct};
        for (size_t i = 0; i < ARRAY_COUNT(u); i++)
                if (is_lost(u[i]->state, u[i]->rc)) {
                        *fn = u[i]->fn;
                        return true;
                }
        return false;
}

static double frac(struct top_reading v, struct top_reading full) {
        return v.have && full.have && full.v > 0 ? v.v / full.v : 0;
}

static void take_gpu(struct top_gpu *t, const struct nvml_gpu *g) {
        t->index = g->index;
        if (nv_ok(g->name))
                snprintf(t->name, sizeof(t->name), "%s", g->name.v);
        else if (!t->name[0])
                snprintf(t->name, sizeof(t->name), "GPU %u", g->index);
        t->util_pct = u32r(&g->util_gpu_pct, 1);
        t->mem_used_bytes = u64r(&g->mem_used_bytes);
        t->mem_total_bytes = u64r(&g->mem_total_bytes);
        t->temp_c = u32r(&g->temp_c, 1);
        t->temp_slowdown_c = u32r(&g->temp_slowdown_c, 1);
        t->power_w = u32r(&g->power_mw, 0.001);
        t->power_limit_w = u32r(&g->power_enforced_limit_mw, 0.001);
        if (!t->power_limit_w.have)
                t->power_limit_w = u32r(&g->power_limit_mw, 0.001);
        t->sm_mhz = u32r(&g->clock_mhz[NVML_CLK_SM], 1);
        t->sm_max_mhz = u32r(&g->clock_max_mhz[NVML_CLK_SM], 1);
        t->mem_mhz = u32r(&g->clock_mhz[NVML_CLK_MEM], 1);
        t->mem_max_mhz = u32r(&g->clock_max_mhz[NVML_CLK_MEM], 1);
        t->fan_pct = u32r(&g->fan_pct, 1);
        t->enc_pct = u32r(&g->util_enc_pct, 1);
        t->dec_pct = u32r(&g->util_dec_pct, 1);
        t->pcie_tx_kbs = u32r(&g->pcie_tx_kbs, 1);
        t->pcie_rx_kbs = u32r(&g->pcie_rx_kbs, 1);
        t->have_reasons = nv_ok(g->clocks_event_reasons);
        t->reasons = t->have_reasons ? g->clocks_event_reasons.v : 0;
        t->have_ecc_mode = nv_ok(g->ecc_mode_current);
        t->ecc_on = t->have_ecc_mode && g->ecc_mode_current.v == NV_ENABLED;
        t->have_ecc_counts = nv_ok(g->ecc_volatile_corrected) && nv_ok(g->ecc_volatile_uncorrected);
        t->ecc_corrected = t->have_ecc_counts ? g->ecc_volatile_corrected.v : 0;
        t->ecc_uncorrected = t->have_ecc_counts ? g->ecc_volatile_uncorrected.v : 0;

        const char *fn = NULL;
        t->why[0] = '\0';
        if (gpu_lost(g, &fn)) {
                t->state = TOP_GPU_LOST;
                snprintf(t->why, sizeof(t->why), "%s: GPU is lost", fn ? fn : "NVML");
        } else if (g->timed_out) {
                t->state = TOP_GPU_STALE;
                snprintf(t->why, sizeof(t->why), "%s did not return within %u ms",
                         g->timeout_fn ? g->timeout_fn : "an NVML call", g->timeout_ms);
        } else {
                t->state = TOP_GPU_LIVE;
        }
        /* A lost or stale GPU's history gets a gap: the chart never carries an old value on. */
        bool live = t->state == TOP_GPU_LIVE;
        struct top_reading pct_full = {.have = true, .v = 100};
        top_series_push(&t->h_util, frac(t->util_pct, pct_full), live && t->util_pct.have);
        top_series_push(&t->h_mem, frac(t->mem_used_bytes, t->mem_total_bytes),
                        live && t->mem_used_bytes.have && t->mem_total_bytes.have);
        struct top_reading temp_full = t->temp_slowdown_c.have ? t->temp_slowdown_c : (struct top_reading){true, 100};
        top_series_push(&t->h_temp, frac(t->temp_c, temp_full), live && t->temp_c.have);
        top_series_push(&t->h_power, frac(t->power_w, t->power_limit_w), live && t->power_w.have && t->power_limit_w.have);
        top_series_push(&t->h_sm, frac(t->sm_mhz, t->sm_max_mhz), live && t->sm_mhz.have && t->sm_max_mhz.have);
        top_series_push(&t->h_mclk, frac(t->mem_mhz, t->mem_max_mhz), live && t->mem_mhz.have && t->mem_max_mhz.have);
}

const struct top_reason top_reasons[] = {
        {NV_CLOCKS_EVENT_GPU_IDLE, "idle", TOP_CLASS_NORMAL},
        {NV_CLOCKS_EVENT_APPLICATIONS_CLOCKS_SETTING, "app-clocks", TOP_CLASS_NORMAL},
        {NV_CLOCKS_EVENT_SW_POWER_CAP, "sw-power", TOP_CLASS_NORMAL},
        {NV_CLOCKS_EVENT_HW_SLOWDOWN, "hw-slowdown", TOP_CLASS_FAULT},
        {NV_CLOCKS_EVENT_SYNC_BOOST, "sync-boost", TOP_CLASS_NORMAL},
        {NV_CLOCKS_EVENT_SW_THERMAL_SLOWDOWN, "sw-thermal", TOP_CLASS_WARN},
        {NV_CLOCKS_EVENT_HW_THERMAL_SLOWDOWN, "hw-thermal", TOP_CLASS_FAULT},
        {NV_CLOCKS_EVENT_HW_POWER_BRAKE_SLOWDOWN, "power-brake", TOP_CLASS_FAULT},
        {NV_CLOCKS_EVENT_DISPLAY_CLOCK_SETTING, "display", TOP_CLASS_NORMAL},
};
const unsigned int top_n_reasons = ARRAY_COUNT(top_reasons);

enum top_gpu_class top_gpu_classify(const struct top_gpu *g) {
        if (g->state == TOP_GPU_LOST)
                return TOP_CLASS_LOST;
        /* Stale readings judge nothing: their values are not shown either. */
        if (g->state == TOP_GPU_STALE)
                return TOP_CLASS_STALE;
        enum top_gpu_class c = TOP_CLASS_NORMAL;
        if (g->have_ecc_counts && g->ecc_uncorrected)
                c = TOP_CLASS_FAULT;
        for (unsigned int i = 0; g->have_reasons && i < top_n_reasons; i++)
                if ((g->reasons & top_reasons[i].bit) && top_reasons[i].class > c)
                        c = top_reasons[i].class;
        return c;
}

static unsigned int count_procs(const struct nvml_facts *f) {
        unsigned int n = 0;
        for (unsigned int i = 0; i < f->n_gpus; i++) {
                const struct nvml_gpu *g = &f->gpus[i];
                if (g->compute_procs.state == NV_OK)
                        n += g->compute_procs.count;
                if (g->graphics_procs.state == NV_OK)
                        n += g->graphics_procs.count;
        }
        return n;
}

static bool has_cpu_time(const struct proc_info *in) { return in->where == PROC_FOUND && in->have_stat; }

static bool have_pid(const struct top_model *m, unsigned int pid) {
        for (unsigned int i = 0; i < m->n_procs; i++)
                if (m->procs[i].pid == pid)
                        return true;
        for (unsigned int i = 0; i < m->n_hosts; i++)
                if (m->hosts[i].pid == pid)
                        return true;
        return false;
}

/* The GPU processes' ancestors from their stat's PPid, each read once however many
 * workers share it, up to PID 1 (init, or a container's own: every process has it),
 * TOP_TREE_MAX_DEPTH at most from each (a /proc of a fixture or of a PID reused under a
 * walk may go round in a loop). Read every round, tree view or not: the view shows the
 * tree at once when t is pressed, not after the next round. */
static int take_hosts(struct top_model *m, const struct top_lookup *look, double uptime_s, long ticks) {
        unsigned int cap = 0;
        m->n_hosts = 0;
        for (unsigned int i = 0; i < m->n_procs; i++) {
                const struct proc_info *in = &m->procs[i].info;
                if (in->where != PROC_FOUND || !in->have_stat)
                        continue;
                unsigned int pid = in->stat.ppid;
                for (unsigned int depth = 0; depth < TOP_TREE_MAX_DEPTH && pid > 1 && !have_pid(m, pid); depth++) {
                        if (m->n_hosts == cap) {
                                unsigned int ncap = cap ? 2 * cap : 8;
                                struct top_host_row *h = realloc(m->hosts, ncap * sizeof(*h));
                                if (!h)
                                        return -ENOMEM;
                                m->hosts = h;
                                cap = ncap;
                        }
                        struct top_host_row *h = &m->hosts[m->n_hosts];
                        *h = (struct top_host_row){.pid = pid, .cpu_pct = -1};
                        proc_lookup_host(look->fs, look->users, look->nested, pid, uptime_s, ticks, &h->info);
                        if (!has_cpu_time(&h->info))
                                break; /* gone since its child's stat was read: the chain ends there */
                        m->n_hosts++;
                        pid = h->info.stat.ppid;
                }
        }
        return 0;
}

static int take_procs(struct top_model *m, const struct nvml_facts *f, const struct top_lookup *look) {
        m->n_procs = 0;
        double uptime_s = look->nested ? -1 : proc_uptime(look->fs);
        long ticks = sysconf(_SC_CLK_TCK);
        for (unsigned int i = 0; i < f->n_gpus; i++) {
                const struct nvml_gpu *g = &f->gpus[i];
                const struct nvml_procs *lists[2] = {&g->compute_procs, &g->graphics_procs};
                for (int l = 0; l < 2; l++) {
                        if (lists[l]->state != NV_OK)
                                continue;
                        for (unsigned int k = 0; k < lists[l]->count; k++) {
                                const struct nvml_process *p = &lists[l]->v[k];
                                struct top_proc_row *r = &m->procs[m->n_procs++];
                                memset(r, 0, sizeof(*r));
                                r->gpu = g->index;
                                r->pid = p->pid;
                                r->have_mem = p->used_bytes != ~0ULL;
                                r->used_bytes = r->have_mem ? p->used_bytes : 0;
                                r->graphics = l == 1;
                                r->sm_pct = i < m->n_gpus && m->gpus[i].state == TOP_GPU_LIVE ? nvml_proc_sm_share(g, p->pid) : -1;
                                r->gpu_util = i < m->n_gpus && m->gpus[i].state == TOP_GPU_LIVE &&
                                                              m->gpus[i].util_pct.have
                                                      ? m->gpus[i].util_pct.v
                                                      : -1;
                                r->cpu_pct = -1;
                                proc_lookup(look->fs, look->users, look->nested, p->pid, uptime_s, ticks,
                                                &r->info);
                        }
                }
        }
        return take_hosts(m, look, uptime_s, ticks);
}

/* CPU % since the process's mark of the previous round; -1 without one. */
static double cpu_since(const struct top_model *m, unsigned int pid, const struct proc_info *in,
                        unsigned long long now_ns, long ticks_per_s) {
        if (!has_cpu_time(in))
                return -1;
        for (unsigned int k = 0; k < m->n_marks; k++)
                if (m->marks[k].pid == pid && m->marks[k].start_ticks == in->stat.start_ticks)
                        return now_ns > m->marks_ns ? proc_cpu_percent(m->marks[k].cpu_ticks,
                                                                      in->stat.utime + in->stat.stime,
                                                                      now_ns - m->marks_ns, ticks_per_s)
                                                    : -1;
        return -1;
}

static void mark(struct top_model *m, unsigned int pid, const struct proc_info *in) {
        if (has_cpu_time(in))
                m->marks[m->n_marks++] = (struct top_cpu_mark){
                        .pid = pid,
                        .start_ticks = in->stat.start_ticks,
                        .cpu_ticks = in->stat.utime + in->stat.stime,
                };
}

int top_model_cpu(struct top_model *m, unsigned long long now_ns, long ticks_per_s) {
        unsigned int n = 0;
        for (unsigned int i = 0; i < m->n_procs; i++) {
                m->procs[i].cpu_pct = cpu_since(m, m->procs[i].pid, &m->procs[i].info, now_ns, ticks_per_s);
                n += has_cpu_time(&m->procs[i].info);
        }
        for (unsigned int i = 0; i < m->n_hosts; i++) {
                m->hosts[i].cpu_pct = cpu_since(m, m->hosts[i].pid, &m->hosts[i].info, now_ns, ticks_per_s);
                n += has_cpu_time(&m->hosts[i].info);
        }
        free(m->marks);
        m->marks = n ? calloc(n, sizeof(*m->marks)) : NULL;
        m->n_marks = 0;
        m->marks_ns = now_ns;
        if (n && !m->marks)
                return -ENOMEM;
        for (unsigned int i = 0; i < m->n_procs; i++)
                mark(m, m->procs[i].pid, &m->procs[i].info);
        for (unsigned int i = 0; i < m->n_hosts; i++)
                mark(m, m->hosts[i].pid, &m->hosts[i].info);
        return 0;
}

int top_model_update(struct top_model *m, const struct nvml_facts *f, unsigned long long taken_ns,
                     const struct top_lookup *look) {
        if (f->n_gpus > m->n_gpus) {
                struct top_gpu *g = realloc(m->gpus, f->n_gpus * sizeof(*g));
                if (!g)
                        return -ENOMEM;
                memset(g + m->n_gpus, 0, (f->n_gpus - m->n_gpus) * sizeof(*g));
                m->gpus = g;
                m->n_gpus = f->n_gpus;
        }
        unsigned int n = count_procs(f);
        free(m->procs);
        m->procs = n ? calloc(n, sizeof(*m->procs)) : NULL;
        m->n_procs = 0;
        if (n && !m->procs)
                return -ENOMEM;
        for (unsigned int i = 0; i < f->n_gpus; i++)
                take_gpu(&m->gpus[i], &f->gpus[i]);
        /* A GPU NVML stopped listing is gone from the bus, not merely quiet. */
        for (unsigned int i = f->n_gpus; i < m->n_gpus; i++)
                if (m->gpus[i].state != TOP_GPU_LOST) {
                        m->gpus[i].state = TOP_GPU_LOST;
                        snprintf(m->gpus[i].why, sizeof(m->gpus[i].why), "no longer listed by NVML");
                }
        if (take_procs(m, f, look) < 0)
                return -ENOMEM;
        /* A failure here costs one round of CPU %, not the view. */
        (void)top_model_cpu(m, monotonic_ns(), sysconf(_SC_CLK_TCK));
        m->taken_ns = taken_ns;
        if (nv_ok(f->driver_version))
                snprintf(m->driver, sizeof(m->driver), "%s", f->driver_version.v);
        m->problem[0] = '\0';
        return 0;
}

void top_model_all_stale(struct top_model *m, const char *why) {
        char old[sizeof(m->problem)];
        snprintf(old, sizeof(old), "%s", m->problem);
        snprintf(m->problem, sizeof(m->problem), "%s", why);
        for (unsigned int i = 0; i < m->n_gpus; i++) {
                struct top_gpu *g = &m->gpus[i];
                /* The live ones, and those an earlier call made stale: "readings 3 s old" grows. */
                if (g->state == TOP_GPU_LIVE || (g->state == TOP_GPU_STALE && old[0] && strcmp(g->why, old) == 0)) {
                        g->state = TOP_GPU_STALE;
                        snprintf(g->why, sizeof(g->why), "%s", why);
                }
        }
}

void top_model_done(struct top_model *m) {
        free(m->marks);
        free(m->gpus);
        free(m->procs);
        free(m->hosts);
        memset(m, 0, sizeof(*m));
}
