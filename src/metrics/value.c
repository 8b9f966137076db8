/* A metric's value from the facts, typed by how nvidia-smi writes it (metrics.h). */
#include "core/array.h"
#include "metrics/metrics.h"

#include <stdio.h>
#include <string.h>

/* The head all nv_* readings share. */
struct head {
        unsigned char state;
        int rc;
        const char *fn;
};
#define HEAD(r) ((struct head){(r)->state, (r)->rc, (r)->fn})

static bool take(struct metric_value *v, struct head h) {
        v->state = h.state;
        v->rc = h.rc;
        v->fn = h.fn;
        return h.state == NV_OK;
}

static void number(struct metric_value *v, const struct metric *m, double raw) {
        v->kind = METRIC_NUMBER;
        v->number = raw * (m->scale != 0 ? m->scale : 1.0);
}

static void flag(struct metric_value *v, bool b) {
        v->kind = METRIC_BOOL;
        v->flag = b;
}

static void text(struct metric_value *v, const char *s) {
        v->kind = METRIC_TEXT;
        snprintf(v->text, sizeof(v->text), "%s", s);
}

bool metric_bus_id_parts(const char *id, unsigned int parts[4]) {
        int end = 0;
        return sscanf(id, "%x:%x:%x.%x%n", &parts[0], &parts[1], &parts[2], &parts[3], &end) == 4 && id[end] == '\0';
}

const char *metric_compute_mode_name(unsigned int mode) {
        static const char *const modes[] = {"Default", "Exclusive_Thread", "Prohibited", "Exclusive_Process"};
        return mode < ARRAY_COUNT(modes) ? modes[mode] : "Unknown";
}

void metric_read(const struct metric *m, const struct nvml_facts *facts, const struct nvml_gpu *gpu,
                 struct metric_value *v) {
        memset(v, 0, sizeof(*v));
        const void *p = (const char *)(m->system ? (const void *)facts : (const void *)gpu) + m->off;
        const struct nv_u32 *u32 = p;
        const struct nv_i32 *i32 = p;
        const struct nv_u64 *u64 = p;
        const struct nv_str *str = p;

        switch (m->smi.format) {
        case SMI_INDEX:
                v->state = NV_OK;
                number(v, m, gpu->index);
                return;
        case SMI_DRIVER_VERSION:
        case SMI_STR:
        case SMI_BUS_ID:
                if (take(v, HEAD(str)))
                        text(v, str->v);
                return;
        case SMI_PCI_DOMAIN:
        case SMI_PCI_BUS:
        case SMI_PCI_DEVICE: {
                unsigned int parts[4];
                if (!take(v, HEAD(str)))
                        return;
                if (metric_bus_id_parts(str->v, parts)) {
                        number(v, m, parts[m->smi.format - SMI_PCI_DOMAIN]);
                } else {
                        /* NVML gave an id the collector kept as is, unparsed. */
                        v->state = NV_ERROR;
                        v->rc = NV_RC_UNKNOWN;
                }
                return;
        }
        case SMI_COUNT:
        case SMI_HEX32:
        case SMI_U32:
        case SMI_U32_BARE_NA:
        case SMI_PSTATE:
        case SMI_WATTS:
        case SMI_FABRIC_STATUS: /* the int of the registration: 0 is success */
        case SMI_FABRIC_CLIQUE:
                if (take(v, HEAD(u32)))
                        number(v, m, u32->v);
                return;
        case SMI_I32:
                if (take(v, HEAD(i32)))
                        number(v, m, i32->v);
                return;
        case SMI_U64:
        case SMI_REASONS:
        case SMI_MIB:
        case SMI_US:
                if (take(v, HEAD(u64)))
                        number(v, m, (double)u64->v);
                return;
        case SMI_F64: {
                const struct nv_f64 *f64 = p;
                if (take(v, HEAD(f64)))
                        number(v, m, f64->v);
                return;
        }
        case SMI_ENABLED:
        case SMI_DISPLAY_MODE:
        case SMI_YESNO:
                if (take(v, HEAD(u32)))
                        flag(v, u32->v != 0);
                return;
        case SMI_REASON_BIT:
                if (take(v, HEAD(u64)))
                        flag(v, (u64->v & m->bit) != 0);
                return;
        case SMI_COMPUTE_MODE:
                if (take(v, HEAD(u32)))
                        text(v, metric_compute_mode_name(u32->v));
                return;
        case SMI_FABRIC_STATE: {
                static const char *const states[] = {"Not Supported", "Not Started", "In Progress", "Completed"};
                if (take(v, HEAD(u32)))
                        text(v, u32->v < ARRAY_COUNT(states) ? states[u32->v] : "Unknown");
                return;
        }
        case SMI_COMPUTE_CAP:
                if (take(v, HEAD(i32)) && take(v, HEAD(&gpu->cc_minor))) {
                        v->kind = METRIC_TEXT;
                        snprintf(v->text, sizeof(v->text), "%d.%d", i32->v, gpu->cc_minor.v);
                }
                return;
        }
}
