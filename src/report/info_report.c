#include "report/info_report.h"

#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "checks/check.h"
#include "core/strparse.h"
#include "metrics/metrics.h"
#include "core/json_text.h"
#include "report/metrics_json.h"
#include "report/report_json.h"
#include "report/text_safe.h"
#include "sys/topo.h"

#define NA "[N/A]"

/* ---- one NVML reading as text: the value, or why there is none -------------------- */

static const char *state_text(unsigned char state, int rc, char *buf, size_t size) {
        switch (state) {
        case NV_ERROR:
                if (rc == NV_RC_NOT_SUPPORTED)
                        return "[Not Supported]";
                if (rc == NV_RC_DEPRECATED)
                        return "[Deprecated]";
                snprintf(buf, size, "[Error: %s]", nv_rc_name(rc));
                return buf;
        case NV_TIMEOUT: return "[Timeout]";
        case NV_NO_FUNCTION: return "[Not Supported by library]";
        default: return NA;
        }
}

struct val {
        char buf[128];
};

/* printf into v when the reading is OK, else its state. */
static const char *fmt_ok(struct val *v, unsigned char state, int rc, const char *fmt, ...)
        __attribute__((format(printf, 4, 5)));
static const char *fmt_ok(struct val *v, unsigned char state, int rc, const char *fmt, ...) {
        if (state != NV_OK)
                return state_text(state, rc, v->buf, sizeof(v->buf));
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(v->buf, sizeof(v->buf), fmt, ap);
        va_end(ap);
        return v->buf;
}

#define U32(v, r, fmt, ...) fmt_ok(v, (r).state, (r).rc, fmt, __VA_ARGS__)

static const char *enabled_name(unsigned int v) { return v == 1 ? "Enabled" : "Disabled"; }

static const struct nvml_gpu *nvml_for(const struct nvml_use *u, const char *addr) {
        if (u->nv->init_state != NVML_INIT_OK)
                return NULL;
        for (unsigned i = 0; i < u->nv->n_gpus; i++) {
                char norm[32];
                const struct nvml_gpu *g = &u->nv->gpus[i];
                if (nv_ok(g->pci_bus_id) && nvml_bus_id_normalise(g->pci_bus_id.v, norm, sizeof(norm)) == 0 &&
                    strcmp(norm, addr) == 0)
                        return g;
        }
        return NULL;
}

static bool nvml_has_sysfs_gpu(const struct facts *f, const struct nvml_gpu *g) {
        char norm[32];
        if (!nv_ok(g->pci_bus_id) || nvml_bus_id_normalise(g->pci_bus_id.v, norm, sizeof(norm)) < 0)
                return false;
        for (size_t i = 0; i < f->gpus.n; i++)
                if (strcmp(gpu_pci(f, i)->addr, norm) == 0)
                        return true;
        return false;
}

/* An NVML GPU whose PCI address NVML could not give: it matches no PCI device, and is
 * neither "NVML only" nor a second copy of one on the bus. */
static bool nvml_unplaced(const struct nvml_gpu *g) {
        char norm[32];
        return !nv_ok(g->pci_bus_id) || nvml_bus_id_normalise(g->pci_bus_id.v, norm, sizeof(norm)) < 0;
}

static unsigned active_links(const struct nvml_gpu *g) {
        unsigned n = 0;
        for (unsigned l = 0; l < g->nvlink_count && l < NV_NVLINK_MAX; l++)
                if (nv_ok(g->nvlink[l].state) && g->nvlink[l].state.v == 1)
                        n++;
        return n;
}

/* ---- text ----------------------------------------------------------------------------- */

/* Values quote machine text (hostnames, NVML names): written terminal-safe. */
#define FIELD(indent, name, ...)                                          \
        do {                                                              \
                char field_value_[2048];                                  \
                printf("%*s%-*s: ", (indent), "", 34 - (indent), (name)); \
                snprintf(field_value_, sizeof(field_value_), __VA_ARGS__); \
                text_safe_write(stdout, field_value_);                    \
                printf("\n");                                             \
        } while (0)

static const char *mw_text(struct val *v, const struct nv_u32 *r) {
        return U32(v, *r, "%.2f W", r->v / 1000.0);
}

static void print_nvml_gpu(const struct nvml_gpu *g) {
        struct val a, b, c, d, e;
        FIELD(4, "UUID", "%s", fmt_ok(&a, g->uuid.state, g->uuid.rc, "%s", g->uuid.v));
        FIELD(4, "Serial Number", "%s", fmt_ok(&a, g->serial.state, g->serial.rc, "%s", g->serial.v));
        FIELD(4, "VBIOS Version", "%s", fmt_ok(&a, g->vbios.state, g->vbios.rc, "%s", g->vbios.v));
        FIELD(4, "Minor Number", "%s", U32(&a, g->minor_number, "%u", g->minor_number.v));
        FIELD(4, "Memory Total", "%s", U32(&a, g->mem_total_bytes, "%llu MiB", g->mem_total_bytes.v >> 20));
        FIELD(4, "BAR1 Total", "%s", U32(&a, g->bar1_total_bytes, "%llu MiB", g->bar1_total_bytes.v >> 20));
        FIELD(4, "PCIe Generation (NVML)", "current %s, max %s", U32(&a, g->pcie_gen, "%u", g->pcie_gen.v),
              U32(&b, g->pcie_max_gen, "%u", g->pcie_max_gen.v));
        FIELD(4, "PCIe Link Width (NVML)", "current %s, max %s", U32(&a, g->pcie_width, "%ux", g->pcie_width.v),
              U32(&b, g->pcie_max_width, "%ux", g->pcie_max_width.v));
        FIELD(4, "Persistence Mode", "%s",
              U32(&a, g->persistence_mode, "%s", enabled_name(g->persistence_mode.v)));
        FIELD(4, "Compute Mode", "%s", U32(&a, g->compute_mode, "%s", metric_compute_mode_name(g->compute_mode.v)));
        FIELD(4, "ECC Mode", "current %s, pending %s",
              U32(&a, g->ecc_mode_current, "%s", enabled_name(g->ecc_mode_current.v)),
              U32(&b, g->ecc_mode_pending, "%s", enabled_name(g->ecc_mode_pending.v)));
        FIELD(4, "MIG Mode", "current %s, pending %s",
              U32(&a, g->mig_mode_current, "%s", enabled_name(g->mig_mode_current.v)),
              U32(&b, g->mig_mode_pending, "%s", enabled_name(g->mig_mode_pending.v)));
        FIELD(4, "Power Limit", "%s (default %s, enforced %s)", mw_text(&a, &g->power_limit_mw),
              mw_text(&b, &g->power_default_limit_mw), mw_text(&c, &g->power_enforced_limit_mw));
        FIELD(4, "Power Limit Range", "min %s, max %s", mw_text(&a, &g->power_min_limit_mw),
              mw_text(&b, &g->power_max_limit_mw));
        FIELD(4, "Max Clocks", "graphics %s, SM %s, memory %s, video %s",
              U32(&a, g->clock_max_mhz[NVML_CLK_GRAPHICS], "%u MHz", g->clock_max_mhz[NVML_CLK_GRAPHICS].v),
              U32(&b, g->clock_max_mhz[NVML_CLK_SM], "%u MHz", g->clock_max_mhz[NVML_CLK_SM].v),
              U32(&c, g->clock_max_mhz[NVML_CLK_MEM], "%u MHz", g->clock_max_mhz[NVML_CLK_MEM].v),
              U32(&d, g->clock_max_mhz[NVML_CLK_VIDEO], "%u MHz", g->clock_max_mhz[NVML_CLK_VIDEO].v));
        if (g->nvlink_count)
                FIELD(4, "NVLinks", "%u (%u active)", g->nvlink_count, active_links(g));
        else
                FIELD(4, "NVLinks", "%s", g->nvlink_end.state == NV_ERROR && g->nvlink_end.rc == NV_RC_NOT_SUPPORTED
                                                  ? "none"
                                                  : state_text(g->nvlink_end.state, g->nvlink_end.rc, a.buf, sizeof(a.buf)));
        FIELD(4, "Temperature Thresholds", "shutdown %s, slowdown %s, GPU max %s, memory max %s",
              U32(&a, g->temp_shutdown_c, "%u C", g->temp_shutdown_c.v),
              U32(&b, g->temp_slowdown_c, "%u C", g->temp_slowdown_c.v),
              U32(&c, g->temp_gpu_max_c, "%u C", g->temp_gpu_max_c.v),
              U32(&e, g->temp_mem_max_c, "%u C", g->temp_mem_max_c.v));
        if (g->timed_out)
                FIELD(4, "NVML", "%s did not return within %u ms: later values unknown", g->timeout_fn, g->timeout_ms);
}

static void print_host(const struct facts *f) {
        const struct host_facts *h = &f->host;
        printf("Host\n");
        FIELD(4, "Hostname", "%s", *h->hostname ? h->hostname : NA);
        FIELD(4, "OS", "%s", *h->os_name ? h->os_name : NA);
        FIELD(4, "Kernel", "%s", *h->kernel_release ? h->kernel_release : NA);
        if (*h->dmi_sys_vendor || *h->dmi_product_name)
                FIELD(4, "System", "%s %s", h->dmi_sys_vendor, h->dmi_product_name);
        FIELD(4, "CPU", "%s", *h->cpu_model ? h->cpu_model : NA);
        if (h->n_cpus_online)
                FIELD(4, "CPUs Online", "%u", h->n_cpus_online);
        else
                FIELD(4, "CPUs Online", NA);
        if (h->mem_total_kb)
                FIELD(4, "Memory", "%llu MiB", (unsigned long long)(h->mem_total_kb / 1024));
        else
                FIELD(4, "Memory", NA);
        FIELD(4, "NUMA Nodes", "%zu", f->numa.n_nodes);
        for (size_t i = 0; i < f->numa.n_nodes; i++) {
                const struct numa_node *nd = &f->numa.nodes[i];
                char label[32];
                snprintf(label, sizeof(label), "Node %d", nd->id);
                const char *cpus = !nd->cpulist ? NA : *nd->cpulist ? nd->cpulist : "none (memory only)";
                if (nd->mem_err == 0)
                        FIELD(8, label, "CPUs %s, memory %llu MiB", cpus, (unsigned long long)(nd->mem_total_kb / 1024));
                else
                        FIELD(8, label, "CPUs %s", cpus);
        }
}

static void print_driver(const struct facts *f, const struct nvml_use *u) {
        const struct nvidia_facts *nd = &f->nvidia;
        const struct nvml_facts *nv = u->nv;
        struct val a;
        printf("\nDriver\n");
        if (nd->have_version)
                FIELD(4, "Kernel Module", "nvidia %s%s", nd->driver_version,
                      nd->open_kernel_module ? " (open)" : " (proprietary)");
        else
                FIELD(4, "Kernel Module", "%s", nd->module_loaded ? "nvidia (version unknown)" : "nvidia not loaded");
        if (nd->nouveau_loaded)
                FIELD(4, "nouveau", "loaded");
        FIELD(4, "Driver Version (NVML)", "%s",
              fmt_ok(&a, nv->driver_version.state, nv->driver_version.rc, "%s", nv->driver_version.v));
        FIELD(4, "NVML Version", "%s", fmt_ok(&a, nv->nvml_version.state, nv->nvml_version.rc, "%s", nv->nvml_version.v));
        FIELD(4, "CUDA Version", "%s",
              fmt_ok(&a, nv->cuda_driver_version.state, nv->cuda_driver_version.rc, "%s", nv->cuda_driver_version_str));
        if (nv->init_state != NVML_INIT_OK)
                FIELD(4, "NVML", "%s", u->why);
        else if (u->lib)
                FIELD(4, "NVML Library", "%s", f->nvml_lib_path);
        if (u->problem[0])
                FIELD(4, "NVML", "%s", u->problem);
}

/* GPU i of the PCI bus, with its NVML reading when NVML saw it; unplaced: how many of
 * NVML's GPUs have no PCI address (why an unmatched GPU may be one of them). */
static void print_gpu(const struct facts *f, const struct nvml_use *u, size_t i, unsigned unplaced) {
        const struct nvml_facts *nv = u->nv;
        const struct gpu *g = &f->gpus.gpus[i];
        const struct pci_dev *d = gpu_pci(f, i);
        const struct nvml_gpu *ng = nvml_for(u, d->addr);
        char name[96];
        gpu_describe(f, i, name, sizeof(name));
        printf("\nGPU %s\n", d->addr);
        if (ng)
                FIELD(4, "Index", "%zu (NVML %u)", i, ng->index);
        else
                FIELD(4, "Index", "%zu", i);
        FIELD(4, "Product Name", "%s", ng && nv_ok(ng->name) ? ng->name.v : name);
        if (d->have_ids)
                FIELD(4, "PCI Device Id", "%04x:%04x (subsystem %04x:%04x)", d->vendor, d->device, d->subsys_vendor,
                      d->subsys_device);
        const struct gpu_arch *arch = g->model ? gpudb_arch(f->db, g->model->arch) : NULL;
        if (g->model)
                FIELD(4, "Architecture", "%s (compute capability %d.%d)", arch ? arch->name : g->model->arch,
                      g->model->cc_major, g->model->cc_minor);
        else
                FIELD(4, "Architecture", "unknown (device not in the GPU table)");
        if (d->have_link)
                FIELD(4, "PCIe Link", "current Gen%u x%u, max Gen%u x%u", pcie_gen_from_mts(d->cur_speed_mts), d->cur_width,
                      pcie_gen_from_mts(d->max_speed_mts), d->max_width);
        else
                FIELD(4, "PCIe Link", NA);
        int node = i < f->numa.n_gpus ? f->numa.gpus[i].node : -1;
        if (node >= 0)
                FIELD(4, "NUMA Node", "%d", node);
        else
                FIELD(4, "NUMA Node", NA);
        FIELD(4, "Local CPUs", "%s", *d->local_cpulist ? d->local_cpulist : NA);
        if (d->iommu_group >= 0)
                FIELD(4, "IOMMU Group", "%d", d->iommu_group);
        else
                FIELD(4, "IOMMU Group", "none");
        FIELD(4, "Driver", "%s", *d->driver ? d->driver : "none");
        /* Without a reading every NVML field shows [N/A]; the Driver section said why. */
        static const struct nvml_gpu unread;
        if (!ng && nv->init_state == NVML_INIT_OK && !nv_ok(nv->device_count))
                FIELD(4, "NVML", "not read: %s", u->problem);
        else if (!ng && nv->init_state == NVML_INIT_OK && unplaced)
                FIELD(4, "NVML", "not matched: NVML could not give the PCI address of %u GPU%s (below)", unplaced,
                      unplaced == 1 ? "" : "s");
        else if (!ng && nv->init_state == NVML_INIT_OK)
                FIELD(4, "NVML", "not seen by NVML (driver %s)", *d->driver ? d->driver : "none");
        print_nvml_gpu(ng ? ng : &unread);
}

/* The GPUs NVML shows that are not on this root's PCI bus, or whose address it could not
 * give. */
static void print_nvml_only_gpus(const struct facts *f, const struct nvml_use *u) {
        const struct nvml_facts *nv = u->nv;
        struct val a;
        for (unsigned i = 0; nv->init_state == NVML_INIT_OK && i < nv->n_gpus; i++) {
                const struct nvml_gpu *ng = &nv->gpus[i];
                if (nvml_unplaced(ng)) {
                        char why[256];
                        const char *p = nvml_reading_problem(u, (int)i, ng->pci_bus_id.state, ng->pci_bus_id.rc,
                                                             ng->pci_bus_id.fn, why, sizeof(why));
                        printf("\nNVML GPU %u (PCI address unknown: ", ng->index);
                        text_safe_write(stdout, p ? p : "not a PCI address");
                        printf(")\n");
                } else if (nvml_has_sysfs_gpu(f, ng)) {
                        continue;
                } else {
                        printf("\nGPU ");
                        text_safe_write(stdout, ng->pci_bus_id.v);
                        printf(" (NVML only: not on this root's PCI bus)\n");
                }
                FIELD(4, "Index", "NVML %u", ng->index);
                FIELD(4, "Product Name", "%s", fmt_ok(&a, ng->name.state, ng->name.rc, "%s", ng->name.v));
                print_nvml_gpu(ng);
        }
}

void info_text(const struct facts *f, const struct nvml_use *u) {
        const struct nvml_facts *nv = u->nv;
        print_host(f);
        print_driver(f, u);
        unsigned extra = 0, unplaced = 0;
        for (unsigned i = 0; nv->init_state == NVML_INIT_OK && i < nv->n_gpus; i++) {
                if (nvml_unplaced(&nv->gpus[i]))
                        unplaced++;
                else
                        extra += !nvml_has_sysfs_gpu(f, &nv->gpus[i]);
        }
        printf("\n");
        FIELD(0, "Attached GPUs", "%zu", f->gpus.n + extra);
        for (size_t i = 0; i < f->gpus.n; i++)
                print_gpu(f, u, i, unplaced);
        print_nvml_only_gpus(f, u);
}

/* ---- JSON ------------------------------------------------------------------------------ */

/* Where the readings of one GPU (or the system) note their failures: each NVML function
 * that failed or hung once, with NVML's error text, so a null says why it is null. */
struct jerr {
        const struct nvml_use *u;
        int gpu;      /* NVML index, -1 for the system */
        json_t *list; /* [{"function", "error"}] */
};

static json_t *noted(struct jerr *e, unsigned char state, int rc, const char *fn) {
        char buf[256];
        const char *err = nvml_reading_error(e->u, e->gpu, state, rc, fn, buf, sizeof(buf));
        if (!err || !fn)
                return json_null();
        size_t i;
        json_t *v;
        json_array_foreach(e->list, i, v) {
                if (strcmp(json_string_value(json_object_get(v, "function")), fn) == 0)
                        return json_null();
        }
        json_t *o = json_object();
        json_object_set_new(o, "function", json_string(fn));
        json_object_set_new(o, "error", json_text(err));
        json_array_append_new(e->list, o);
        return json_null();
}
#define NOTE(e, r) noted((e), (r).state, (r).rc, (r).fn)

static json_t *note_metric(void *e, unsigned char state, int rc, const char *fn) { return noted(e, state, rc, fn); }

static json_t *j_str(struct jerr *e, const struct nv_str *r) { return nv_ok(*r) ? json_text(r->v) : NOTE(e, *r); }
static json_t *j_u32(struct jerr *e, const struct nv_u32 *r) { return nv_ok(*r) ? json_integer(r->v) : NOTE(e, *r); }
static json_t *j_bytes(struct jerr *e, const struct nv_u64 *r) {
        return nv_ok(*r) ? json_integer((json_int_t)r->v) : NOTE(e, *r);
}
static json_t *j_hertz(struct jerr *e, const struct nv_u32 *r) {
        return nv_ok(*r) ? json_integer((json_int_t)r->v * 1000000) : NOTE(e, *r);
}

static json_t *nvml_gpu_json(const struct nvml_use *u, const struct nvml_gpu *g) {
        struct jerr e = {.u = u, .gpu = (int)g->index, .list = json_array()};
        json_t *o = json_object();
        json_object_set_new(o, "index", json_integer(g->index));
        /* Each reading once: what the registry's metrics carry (name, UUID, PCIe link, modes,
         * power limits, max clocks...) is only under "metrics", in its units; here only
         * what no metric gives. */
        json_object_set_new(o, "minor_number", j_u32(&e, &g->minor_number));
        json_object_set_new(o, "bar1_total_bytes", j_bytes(&e, &g->bar1_total_bytes));
        json_object_set_new(o, "clock_max_video_hertz", j_hertz(&e, &g->clock_max_mhz[NVML_CLK_VIDEO]));
        unsigned char lstate;
        int lrc;
        const char *lfn;
        if (topo_nvlinks_readable(g, &lstate, &lrc, &lfn)) {
                json_object_set_new(o, "nvlinks", json_integer(g->nvlink_count));
                json_object_set_new(o, "nvlinks_active", json_integer(active_links(g)));
        } else {
                /* A walk cut short before the first link read is a hang: NV_UNREAD. */
                json_object_set_new(o, "nvlinks", noted(&e, lstate == NV_UNREAD ? NV_TIMEOUT : lstate, lrc, lfn));
                json_object_set_new(o, "nvlinks_active", json_null());
        }
        json_t *t = json_object();
        json_object_set_new(t, "shutdown", j_u32(&e, &g->temp_shutdown_c));
        json_object_set_new(t, "slowdown", j_u32(&e, &g->temp_slowdown_c));
        json_object_set_new(t, "gpu_max", j_u32(&e, &g->temp_gpu_max_c));
        json_object_set_new(t, "memory_max", j_u32(&e, &g->temp_mem_max_c));
        json_object_set_new(o, "temperature_thresholds_c", t);
        json_object_set_new(o, "metrics", metrics_json(u->nv, g, false, note_metric, &e));
        json_object_set_new(o, "timed_out_in", g->timed_out ? json_string(g->timeout_fn) : json_null());
        json_object_set_new(o, "errors", e.list);
        return o;
}

char *info_json(const struct facts *f, const struct nvml_use *u) {
        const struct nvml_facts *nv = u->nv;
        json_t *root = json_object();
        json_object_set_new(root, "schema", json_string("gpuvet.info/1"));
        json_object_set_new(root, "host", report_json_host(f));

        const struct nvidia_facts *nd = &f->nvidia;
        struct jerr e = {.u = u, .gpu = -1, .list = json_array()};
        json_t *drv = json_object();
        json_object_set_new(drv, "module_loaded", json_boolean(nd->module_loaded));
        json_object_set_new(drv, "module_version", nd->have_version ? json_string(nd->driver_version) : json_null());
        json_object_set_new(drv, "open_kernel_module", nd->have_version ? json_boolean(nd->open_kernel_module) : json_null());
        json_object_set_new(drv, "nouveau_loaded", json_boolean(nd->nouveau_loaded));
        json_object_set_new(drv, "nvml_driver_version", j_str(&e, &nv->driver_version));
        json_object_set_new(drv, "nvml_version", j_str(&e, &nv->nvml_version));
        json_object_set_new(drv, "cuda_driver_version",
                            nv_ok(nv->cuda_driver_version) ? json_text(nv->cuda_driver_version_str)
                                                           : NOTE(&e, nv->cuda_driver_version));
        json_object_set_new(root, "driver", drv);

        json_t *n = json_object();
        json_object_set_new(n, "status", json_string(u->status));
        json_object_set_new(n, "reason", nv->init_state != NVML_INIT_OK ? json_text(u->why) : json_text(u->problem));
        json_object_set_new(n, "library", u->lib ? json_string(f->nvml_lib_path) : json_null());
        json_object_set_new(n, "device_count", j_u32(&e, &nv->device_count));
        json_object_set_new(n, "metrics", metrics_json(nv, NULL, true, note_metric, &e));
        json_object_set_new(n, "errors", e.list);
        json_object_set_new(root, "nvml", n);

        json_t *gpus = report_json_gpus(f);
        for (size_t i = 0; i < f->gpus.n; i++) {
                const struct pci_dev *d = gpu_pci(f, i);
                json_t *o = json_array_get(gpus, i);
                char buf[16];
                snprintf(buf, sizeof(buf), "%04x:%04x", d->subsys_vendor, d->subsys_device);
                json_object_set_new(o, "pci_subsystem_id", d->have_ids ? json_string(buf) : json_null());
                const struct nvml_gpu *ng = nvml_for(u, d->addr);
                json_object_set_new(o, "nvml", ng ? nvml_gpu_json(u, ng) : json_null());
        }
        json_object_set_new(root, "gpus", gpus);
        json_t *only = json_array(), *unmatched = json_array();
        for (unsigned i = 0; nv->init_state == NVML_INIT_OK && i < nv->n_gpus; i++) {
                if (nvml_unplaced(&nv->gpus[i]))
                        json_array_append_new(unmatched, nvml_gpu_json(u, &nv->gpus[i]));
                else if (!nvml_has_sysfs_gpu(f, &nv->gpus[i]))
                        json_array_append_new(only, nvml_gpu_json(u, &nv->gpus[i]));
        }
        json_object_set_new(root, "nvml_only_gpus", only);
        json_object_set_new(root, "nvml_unmatched_gpus", unmatched);
        char *out = json_dumps(root, JSON_INDENT(2) | JSON_REAL_PRECISION(15));
        json_decref(root);
        return out;
}

