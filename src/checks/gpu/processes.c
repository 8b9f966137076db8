/* gpu.graphics_processes and gpu.recovery_action: what runs on the GPU, and what the driver asks of the operator.
 * docs/checks/gpu.md documents each; the shared NVML judging is in nvml_common.c. */
#include "checks/check.h"
#include "checks/gpu/nvml_common.h"
#include "core/strbuf.h"
#include "core/strparse.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>

/* ---- gpu.graphics_processes ---------------------------------------------------------- */

static void judge_graphics_processes(struct result *r, const struct facts *f, const struct nvml_gpu *g,
                                     const char *desc) {
        const struct gpu_model *m = nv_model(f, g);
        bool compute_gpu = !m || m->datacenter;
        result_expected(r, compute_gpu ? "no graphics process on a compute GPU" : "any (a workstation GPU)");
        const struct nvml_procs *p = &g->graphics_procs;
        if (nv_skip_unsupported(r, p->state, p->rc, "nvmlDeviceGetGraphicsRunningProcesses_v3",
                             "graphics process list", desc, ""))
                return;
        if (nv_reading_unusable(r, f, g, "graphics processes", p->state, p->rc, p->fn))
                return;
        result_evidence(r, "source", "nvmlDeviceGetGraphicsRunningProcesses_v3");
        if (p->count == 0) {
                result_observed(r, "none");
                result_status(r, STATUS_PASS, "no graphics process on %s", desc);
                return;
        }
        char pids[256] = "", pid_arg[256] = "";
        for (unsigned int k = 0; k < p->count && p->v; k++) {
                strbuf_appendf(pids, sizeof(pids), "%s%u", pids[0] ? ", " : "", p->v[k].pid);
                strbuf_appendf(pid_arg, sizeof(pid_arg), "%s%u", pid_arg[0] ? "," : "", p->v[k].pid);
        }
        result_observed(r, "%u graphics process%s (pid %s)", p->count, p->count == 1 ? "" : "es", pids);
        if (!compute_gpu) {
                result_status(r, STATUS_PASS, "%u graphics process%s on %s, a workstation GPU that may drive "
                                              "a display",
                              p->count, p->count == 1 ? "" : "es", desc);
                return;
        }
        result_status(r, STATUS_WARN,
                      "%u graphics process%s (pid %s) on %s: a display server or desktop on a compute GPU "
                      "takes memory and time slices from jobs",
                      p->count, p->count == 1 ? "" : "es", pids, desc);
        result_remedy(r, "See what they are (`ps -o pid,comm -p %s`); stop the display manager and boot to "
                         "text (`systemctl set-default multi-user.target`), or drive the console from the "
                         "BMC's VGA device instead.",
                      pid_arg);
}

static void run_graphics_processes(const struct check_info *self, const struct facts *f, struct report *rep) {
        nv_each_gpu(self, f, rep, judge_graphics_processes);
}

CHECK_INFO(gpu_graphics_processes, "gpu", "gpu.graphics_processes", LEVEL_QUICK, NEED_XID | NEED_NVML,
           "No graphics process (display server, desktop) on a compute GPU",
           run_graphics_processes);

/* ---- gpu.recovery_action -------------------------------------------------------------- */

/* The driver's own verdict on the GPU (R565+): what it takes to make the GPU usable
 * again. The values and remedies are xid.json's recovery_actions, shared with Xid 154. */
static void judge_recovery_action(struct result *r, const struct facts *f, const struct nvml_gpu *g, const char *desc) {
        result_expected(r, "recovery action 0x0 (None)");
        const struct nv_u32 *a = &g->recovery_action;
        /* The field came with R565: the reason only where the driver is older. */
        unsigned branch = nv_driver_branch(f);
        if (nv_skip_unsupported(r, a->state, a->rc, "nvmlDeviceGetFieldValues", "the GPU recovery action field",
                             desc, branch && branch < 565 ? " (drivers before R565 do not report it)" : ""))
                return;
        if (UNUSABLE(r, f, g, "recovery action", *a))
                return;
        result_evidence(r, "source", "nvmlDeviceGetFieldValues (NVML_FI_DEV_GET_GPU_RECOVERY_ACTION)");
        const struct xid_recovery_action *known = f->db ? xiddb_find_recovery(gpudb_xids(f->db), a->v) : NULL;
        result_observed(r, "0x%x (%s)", a->v, known ? known->name : "unknown to gpuvet");
        if (a->v == 0) {
                result_status(r, STATUS_PASS, "the driver asks for no recovery of %s", desc);
                return;
        }
        if (!known) {
                result_status(r, STATUS_WARN, "the driver asks for recovery action 0x%x on %s, a value gpuvet "
                                              "does not know",
                              a->v, desc);
                result_remedy(r, "See `nvidia-smi -q -i %u` (GPU Recovery Action) and NVIDIA's documentation "
                                 "for the driver in use.",
                              g->index);
                return;
        }
        result_status(r, known->severity == XID_CRITICAL ? STATUS_FAIL : STATUS_WARN,
                      "the driver asks for \"%s\" on %s before new work", known->name, desc);
        /* xid.json's actions say `nvidia-smi -r -i <index>`: this GPU's is known. */
        char index[16], action[1024];
        snprintf(index, sizeof(index), "%u", g->index);
        strbuf_replace(action, sizeof(action), known->action, "<index>", index);
        result_remedy(r, "%s.", action);
}

static void run_recovery_action(const struct check_info *self, const struct facts *f, struct report *rep) {
        nv_each_gpu(self, f, rep, judge_recovery_action);
}

CHECK_INFO(gpu_recovery_action, "gpu", "gpu.recovery_action", LEVEL_QUICK, NEED_XID | NEED_NVML,
           "The driver asks for no recovery of the GPU (reset, reboot, drain)",
           run_recovery_action);
