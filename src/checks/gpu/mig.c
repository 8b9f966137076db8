/* gpu.mig: MIG mode as configured.
 * docs/checks/gpu.md documents each; the shared NVML judging is in nvml_common.c. */
#include "checks/check.h"
#include "checks/gpu/nvml_common.h"
#include "core/strbuf.h"
#include "core/strparse.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>

/* ---- gpu.mig --------------------------------------------------------------------------- */

static void judge_mig(struct result *r, const struct facts *f, const struct nvml_gpu *g, const char *desc) {
        result_expected(r, "MIG mode as configured: no change pending; instances created when enabled");
        if (UNUSABLE(r, f, g, "MIG mode", g->mig_mode_current))
                return;
        result_evidence(r, "source", "nvmlDeviceGetMigMode");
        bool cur = g->mig_mode_current.v == NV_ENABLED;
        enum policy_mig want_mig = f->policy ? f->policy->mig : POLICY_MIG_UNSET;
        bool have_pending = nv_ok(g->mig_mode_pending);
        bool pend = have_pending ? g->mig_mode_pending.v == NV_ENABLED : cur;
        bool have_count = cur && nv_ok(g->mig_device_count);
        char count[48] = "";
        if (have_count)
                snprintf(count, sizeof(count), ", %u MIG device%s", g->mig_device_count.v,
                         g->mig_device_count.v == 1 ? "" : "s");
        result_observed(r, "%s%s%s%s", cur ? "enabled" : "disabled", pend != cur ? ", " : "",
                        pend != cur ? (pend ? "enabled pending" : "disabled pending") : "", count);
        if (have_count)
                result_evidence(r, "mig_devices", "nvmlDeviceGetMigDeviceHandleByIndex (max %u)",
                                nv_ok(g->mig_max_devices) ? g->mig_max_devices.v : 0);
        if (pend != cur) {
                result_status(r, STATUS_WARN, "MIG mode of %s is %s with %s pending: reset the GPU to apply",
                              desc, cur ? "enabled" : "disabled", pend ? "enabled" : "disabled");
                result_remedy(r, "Reset the GPU with no process using it (`nvidia-smi -r -i %u`) or reboot.",
                              g->index);
                return;
        }
        if ((want_mig == POLICY_MIG_ENABLED && !cur) || (want_mig == POLICY_MIG_DISABLED && cur)) {
                result_status(r, STATUS_FAIL, "MIG is %s on %s; the site policy expects it %s", cur ? "enabled" : "disabled",
                              desc, cur ? "disabled" : "enabled");
                result_evidence(r, "policy", "%s:%u (expect.mig)", f->policy->path, f->policy->expect_line);
                result_remedy(r, "Set it as the site expects: `nvidia-smi -i %u -mig %d`, then reset the GPU "
                                 "(`nvidia-smi -r -i %u`)%s.",
                              g->index, cur ? 0 : 1, g->index,
                              cur ? "" : " and create the instances the site's MIG layout names");
                return;
        }
        /* An admission gate: a job placed here finds no CUDA device at all, unless a MIG
         * manager creates instances as jobs arrive. */
        if (cur && have_count && g->mig_device_count.v == 0 && want_mig == POLICY_MIG_MANAGED) {
                result_status(r, STATUS_PASS, "MIG enabled with no instance yet: the site policy leaves "
                                              "instances to its MIG manager");
                result_evidence(r, "policy", "%s:%u (expect.mig: managed)", f->policy->path,
                                f->policy->expect_line);
                return;
        }
        if (cur && have_count && g->mig_device_count.v == 0) {
                result_status(r, STATUS_FAIL, "MIG is enabled on %s but no instance exists: CUDA sees no device "
                                              "on it",
                              desc);
                result_remedy(r, "Create GPU and compute instances (`nvidia-smi mig -i %u -cgi <profiles> -C`, "
                                 "or your MIG manager), or disable MIG (`nvidia-smi -i %u -mig 0`).",
                              g->index, g->index);
                return;
        }
        if (cur && !have_count && g->mig_device_count.state != NV_UNREAD &&
            UNUSABLE(r, f, g, "MIG devices", g->mig_device_count))
                return;
        result_status(r, STATUS_PASS, "MIG %s%s", cur ? "enabled" : "disabled", count);
}

static void run_mig(const struct check_info *self, const struct facts *f, struct report *rep) {
        nv_each_gpu(self, f, rep, judge_mig);
}

CHECK_INFO(gpu_mig, "gpu", "gpu.mig", LEVEL_QUICK, NEED_XID | NEED_NVML,
           "MIG mode as configured: nothing pending, instances created",
           run_mig);
