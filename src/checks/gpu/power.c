/* gpu.power_limit and gpu.app_clocks: settings that cap a GPU below what it can do.
 * docs/checks/gpu.md documents each; the shared NVML judging is in nvml_common.c. */
#include "checks/check.h"
#include "checks/gpu/nvml_common.h"
#include "core/array.h"
#include "core/strbuf.h"
#include "core/strparse.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>

/* ---- gpu.power_limit ------------------------------------------------------------- */

static void judge_power_limit(struct result *r, const struct facts *f, const struct nvml_gpu *g, const char *desc) {
        const struct nv_u32 *lim = nv_ok(g->power_enforced_limit_mw) ? &g->power_enforced_limit_mw
                                                                     : &g->power_limit_mw;
        if (nv_ok(g->power_default_limit_mw))
                result_expected(r, ">= %u W (the default limit)", MW_TO_W(g->power_default_limit_mw.v));
        else
                result_expected(r, "at or above the default power limit");
        if (UNUSABLE(r, f, g, "power limit", *lim) || UNUSABLE(r, f, g, "default power limit", g->power_default_limit_mw))
                return;
        unsigned int w = MW_TO_W(lim->v), def = MW_TO_W(g->power_default_limit_mw.v);
        /* The NVML readings judged, by their calls' names as the other checks give them
         * (the limits may have come from nvmlDeviceGetFieldValues' fields for them). */
        result_evidence(r, "source", "%s, nvmlDeviceGetPowerManagementDefaultLimit",
                        lim == &g->power_enforced_limit_mw ? "nvmlDeviceGetEnforcedPowerLimit"
                                                           : "nvmlDeviceGetPowerManagementLimit");
        if (nv_ok(g->power_min_limit_mw) && nv_ok(g->power_max_limit_mw)) {
                result_observed(r, "%u W (min %u W, default %u W, max %u W)", w,
                                MW_TO_W(g->power_min_limit_mw.v), def, MW_TO_W(g->power_max_limit_mw.v));
                result_evidence(r, "constraints", "nvmlDeviceGetPowerManagementLimitConstraints");
        } else {
                result_observed(r, "%u W (default %u W)", w, def);
        }
        /* Values no working GPU reports (a 0 W limit, min above max, a default outside
         * its own range) say NVML's power readings cannot be trusted, not that the
         * GPU is fine or capped. */
        bool constraints = nv_ok(g->power_min_limit_mw) && nv_ok(g->power_max_limit_mw);
        const char *implausible = lim->v == 0                              ? "a power limit of 0 W"
                                  : g->power_default_limit_mw.v == 0      ? "a default power limit of 0 W"
                                  : constraints && g->power_min_limit_mw.v > g->power_max_limit_mw.v
                                          ? "a minimum power limit above the maximum"
                                  : constraints && (g->power_default_limit_mw.v < g->power_min_limit_mw.v ||
                                                    g->power_default_limit_mw.v > g->power_max_limit_mw.v)
                                          ? "a default power limit outside its own min-max range"
                                          : NULL;
        if (implausible) {
                result_status(r, STATUS_ERROR, "NVML reports %s for %s: its power readings cannot be judged",
                              implausible, desc);
                result_remedy(r, "Compare with `nvidia-smi -q -d POWER -i %u`; values like these point at a "
                                 "driver or firmware fault: update the driver, reset the GPU (`nvidia-smi -r "
                                 "-i %u`) or have it serviced if they stay.",
                              g->index, g->index);
                return;
        }
        /* A site that caps power on purpose sets the fraction it accepts. */
        double fraction = check_thresholds(f)->power_cap_fraction;
        if (fraction < 1.0)
                result_evidence(r, "threshold", "warn below %.0f%% of the default limit (site policy)",
                                fraction * 100);
        if ((double)lim->v < fraction * g->power_default_limit_mw.v) {
                result_status(r, STATUS_WARN, "the power limit of %s is capped at %u W, below its default %u W: "
                                              "it runs slower under load",
                              desc, w, def);
                result_remedy(r, "If nobody capped it on purpose, restore the default: `gpuvet tune apply --set "
                                 "gpu.power_limit=default` (every GPU; `gpuvet tune revert` undoes it) or "
                                 "`nvidia-smi -i %u -pl %u`. Both are lost at reboot: look for a service or "
                                 "script that sets it, and the BMC's power capping.",
                              g->index, def);
                return;
        }
        if (lim->v < g->power_default_limit_mw.v)
                result_status(r, STATUS_PASS, "power limit %u W, %.0f%% of the default %u W: within the site's "
                                              "cap",
                              w, 100.0 * lim->v / g->power_default_limit_mw.v, def);
        else
                result_status(r, STATUS_PASS, "power limit %u W (default %u W)", w, def);
}

static void run_power_limit(const struct check_info *self, const struct facts *f, struct report *rep) {
        nv_each_gpu(self, f, rep, judge_power_limit);
}

CHECK_INFO(gpu_power_limit, "gpu", "gpu.power_limit", LEVEL_QUICK, NEED_XID | NEED_NVML,
           "The power limit is not capped below the default",
           run_power_limit);

/* ---- gpu.app_clocks ------------------------------------------------------------------ */

static void judge_app_clocks(struct result *r, const struct facts *f, const struct nvml_gpu *g, const char *desc) {
        const struct nv_u32 *sm = &g->clock_app_mhz[NVML_CLK_GRAPHICS], *mem = &g->clock_app_mhz[NVML_CLK_MEM];
        const struct nv_u32 *dsm = &g->clock_default_app_mhz[NVML_CLK_GRAPHICS],
                            *dmem = &g->clock_default_app_mhz[NVML_CLK_MEM];
        if (nv_ok(*dsm) && nv_ok(*dmem))
                result_expected(r, "graphics %u MHz, memory %u MHz (the defaults)", dsm->v, dmem->v);
        else
                result_expected(r, "applications clocks at their defaults");
        /* nvml.h marks the applications clocks deprecated in CUDA 13.0 ("will be removed in
         * CUDA 14.0"), and R590 and later drivers answer DEPRECATED: a driver fact, not a GPU
         * fault. Their successor, locked clocks, has no NVML getter; what a clock setting does
         * to the GPU shows in its clock event reasons (gpu.clock_events). */
        const struct nv_u32 *all[] = {sm, mem, dsm, dmem};
        for (size_t i = 0; i < ARRAY_COUNT(all); i++) {
                if (all[i]->state != NV_ERROR || all[i]->rc != NV_RC_DEPRECATED)
                        continue;
                result_evidence(r, "source", "%s", all[i]->fn ? all[i]->fn : "nvmlDeviceGetApplicationsClock");
                result_evidence(r, "nvml_return", "%s", nv_rc_name(NV_RC_DEPRECATED));
                result_observed(r, "deprecated: the driver no longer reports applications clocks");
                result_status(r, STATUS_SKIP,
                              "applications clocks of %s: deprecated: this driver no longer offers them (their "
                              "successor, locked clocks (`nvidia-smi -lgc`/`-lmc`), has no NVML reading; "
                              "gpu.clock_events shows a clock setting that holds the GPU back)",
                              desc);
                return;
        }
        if (UNUSABLE(r, f, g, "applications clocks", *sm) || UNUSABLE(r, f, g, "applications clocks", *mem) ||
            UNUSABLE(r, f, g, "default applications clocks", *dsm) ||
            UNUSABLE(r, f, g, "default applications clocks", *dmem))
                return;
        result_evidence(r, "source", "nvmlDeviceGetApplicationsClock, nvmlDeviceGetDefaultApplicationsClock");
        result_observed(r, "graphics %u MHz, memory %u MHz", sm->v, mem->v);
        if (sm->v != dsm->v || mem->v != dmem->v) {
                result_status(r, STATUS_WARN, "applications clocks of %s are set to graphics %u MHz, memory %u "
                                              "MHz instead of the defaults %u/%u MHz",
                              desc, sm->v, mem->v, dsm->v, dmem->v);
                result_remedy(r, "If nobody set them on purpose, reset them: `gpuvet tune apply --set "
                                 "gpu.app_clocks=default` (every GPU; `gpuvet tune revert` undoes it) or "
                                 "`nvidia-smi -rac -i %u`.",
                              g->index);
                return;
        }
        result_status(r, STATUS_PASS, "applications clocks at their defaults");
}

static void run_app_clocks(const struct check_info *self, const struct facts *f, struct report *rep) {
        nv_each_gpu(self, f, rep, judge_app_clocks);
}

CHECK_INFO(gpu_app_clocks, "gpu", "gpu.app_clocks", LEVEL_QUICK, NEED_XID | NEED_NVML,
           "Applications clocks are not locked away from their defaults",
           run_app_clocks);
