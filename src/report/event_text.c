#include "report/event_text.h"

#include "sys/nvml_facts.h"

void event_text(FILE *out, const struct nvml_event *e, const struct xiddb *db) {
        char gpu[48];
        if (e->addr[0])
                snprintf(gpu, sizeof(gpu), "GPU %s", e->addr);
        else if (e->gpu >= 0)
                snprintf(gpu, sizeof(gpu), "GPU %d", e->gpu);
        else
                snprintf(gpu, sizeof(gpu), "a GPU NVML did not name");
        const char *text = nv_rc_text(NULL, e->rc);
        const struct xid_info *info;
        switch (e->kind) {
        case NVML_EVENT_XID:
                info = e->data <= 0x7fffffffULL ? xiddb_find(db, (int)e->data) : NULL;
                if (info)
                        fprintf(out, "gpuvet: Xid %llu on %s (%s, %s): %s\n", e->data, gpu, info->name,
                                xid_severity_name(info->severity), info->action);
                else
                        fprintf(out,
                                "gpuvet: Xid %llu on %s (not in gpuvet's Xid table): look it up in NVIDIA's Xid "
                                "catalog (docs.nvidia.com/deploy/xid-errors)\n",
                                e->data, gpu);
                break;
        case NVML_EVENT_ECC_DBE:
                /* The driver logs the same error as Xid 48: same meaning, same action. */
                info = xiddb_find(db, 48);
                fprintf(out, "gpuvet: double-bit ECC error on %s (uncorrectable, critical): %s\n", gpu,
                        info ? info->action : "drain the node and reset the GPU (nvidia-smi -r)");
                break;
        case NVML_EVENT_ECC_SBE:
                fprintf(out, "gpuvet: single-bit ECC error on %s (corrected; if they keep coming, see gpu.ecc)\n",
                        gpu);
                break;
        case NVML_EVENT_OTHER:
                fprintf(out, "gpuvet: NVML event 0x%llx on %s (data %llu)\n", e->type, gpu, e->data);
                break;
        case NVML_EVENT_UNSUPPORTED:
                if (e->rc == NV_RC_SUCCESS)
                        fprintf(out, "gpuvet: %s: no Xid or ECC events from NVML (it supports 0x%llx); "
                                        "its Xids show only in the kernel log\n", gpu, e->data);
                else
                        fprintf(out, "gpuvet: %s: no Xid or ECC events from NVML (%s: %s); "
                                        "its Xids show only in the kernel log\n", gpu, e->fn, text);
                break;
        case NVML_EVENT_GPU_LOST:
                fprintf(out, "gpuvet: %s is lost (%s: %s)\n", gpu, e->fn, text);
                break;
        case NVML_EVENT_HUNG:
                fprintf(out, "gpuvet: %s did not return within %u ms\n", e->fn, e->elapsed_ms);
                break;
        default:
                if (e->gpu >= 0 || e->addr[0])
                        fprintf(out, "gpuvet: events: %s: %s: %s\n", gpu, e->fn, text);
                else
                        fprintf(out, "gpuvet: events: %s: %s\n", e->fn, text);
                break;
        }
}
